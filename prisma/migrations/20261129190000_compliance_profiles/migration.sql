-- Compliance profiles (docs/campaigns.md "Compliance profiles"): the account's choice (null: the
-- service default) and the profiles in force for a batch, fixed at its create.
ALTER TABLE "accounts" ADD COLUMN "compliance_profiles" JSONB;
ALTER TABLE "batches" ADD COLUMN "compliance_profiles" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];
