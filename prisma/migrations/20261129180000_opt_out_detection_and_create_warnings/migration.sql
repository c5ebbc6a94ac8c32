-- Opt-out detection on by default (docs/campaigns.md "Opt-out from the conversation"): an agent
-- may turn the default key and the phrase list off. And the create response's warnings, kept with
-- the batch so that an idempotent replay returns what the create returned (bounded: at most
-- MAX_CREATE_WARNINGS entries, each with at most MAX_WARNING_CONTACTS contacts).
-- AlterTable
ALTER TABLE "agents" ADD COLUMN "opt_out_detection" BOOLEAN NOT NULL DEFAULT true;

-- AlterTable
ALTER TABLE "batches" ADD COLUMN "create_warnings" JSONB NOT NULL DEFAULT '[]';
