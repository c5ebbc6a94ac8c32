-- Calling windows (issue 15; docs/campaigns.md). All null: accounts, batches and calls behave as before.
ALTER TABLE "accounts" ADD COLUMN "default_calling_window" JSONB,
ADD COLUMN "enforced_calling_window" JSONB;

ALTER TABLE "batches" ADD COLUMN "calling_window" JSONB,
ADD COLUMN "enforced_window" JSONB;

ALTER TABLE "calls" ADD COLUMN "timezone" TEXT,
ADD COLUMN "window_closes_at" TIMESTAMPTZ(3);

-- Waiting calls of windowed batches only (a plain batch's calls add no entry), in the order the
-- claim takes pending ones: window closing soonest first, then by submission. The claim reads the
-- range of windows not yet closed; the window sweep reads the range of those closed, pending or
-- put back for a retry, and moves them to their next window.
CREATE INDEX "calls_batch_id_status_window_closes_at_seq_idx" ON "calls"("batch_id", "status", "window_closes_at", "seq")
WHERE "window_closes_at" IS NOT NULL AND "status" IN ('pending', 'queued');

-- The window sweep's batches: only those with a window.
CREATE INDEX "batches_windowed_status_idx" ON "batches"("status")
WHERE "calling_window" IS NOT NULL OR "enforced_window" IS NOT NULL;
