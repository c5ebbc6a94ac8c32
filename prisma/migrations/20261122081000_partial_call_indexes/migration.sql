-- Bulk creation writes every index of `calls` once per contact, and index upkeep is most of an
-- insert's cost (bench/create-batch). These five index columns that are NULL on every new call
-- (no lease, provider call, transcript or outcomes yet), so they become partial: a new call adds no
-- entry to them. Every query they serve compares the column with a strict operator (`<`, `=`, `@?`),
-- which implies IS NOT NULL, so the planner still uses them.
-- Prisma's schema language cannot state the predicate; prisma/schema.prisma keeps the plain
-- @@index lines and says so.

DROP INDEX "calls_status_lease_expires_at_idx";
CREATE INDEX "calls_status_lease_expires_at_idx" ON "calls"("status", "lease_expires_at") WHERE "lease_expires_at" IS NOT NULL;

DROP INDEX "calls_provider_call_id_idx";
CREATE INDEX "calls_provider_call_id_idx" ON "calls"("provider_call_id") WHERE "provider_call_id" IS NOT NULL;

DROP INDEX "calls_batch_id_transcript_status_seq_idx";
CREATE INDEX "calls_batch_id_transcript_status_seq_idx" ON "calls"("batch_id", "transcript_status", "seq") WHERE "transcript_status" IS NOT NULL;

DROP INDEX "calls_batch_id_transcript_status_status_seq_idx";
CREATE INDEX "calls_batch_id_transcript_status_status_seq_idx" ON "calls"("batch_id", "transcript_status", "status", "seq") WHERE "transcript_status" IS NOT NULL;

DROP INDEX "calls_outcomes_idx";
CREATE INDEX "calls_outcomes_idx" ON "calls" USING GIN ("outcomes" jsonb_ops) WHERE "outcomes" IS NOT NULL;
