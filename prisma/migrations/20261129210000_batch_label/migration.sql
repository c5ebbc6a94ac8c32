-- A batch option (src/domain/batch-options.ts): a name for people, at most 200 characters (checked at create).
ALTER TABLE "batches" ADD COLUMN "label" TEXT;
