-- A batch's retry policy and expiry (issue 15). All null: the batch behaves as before.
ALTER TABLE "batches" ADD COLUMN "retry_max_attempts" INTEGER,
ADD COLUMN "retry_on" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
ADD COLUMN "retry_delay_seconds" INTEGER,
ADD COLUMN "expires_at" TIMESTAMPTZ(3);

-- The expiry sweep: only batches that have an expiry.
CREATE INDEX "batches_expires_at_idx" ON "batches"("expires_at") WHERE "expires_at" IS NOT NULL;

-- Calls put back in line (retries waiting for their time, calls requeued by lease recovery), in
-- the order the claim takes them: due first (a requeue has no time: due at once), then by
-- submission. The claim reads the due ones as one range, never the ones still waiting.
CREATE INDEX "calls_requeued_due_idx" ON "calls"("batch_id", (COALESCE("next_attempt_at", '-infinity'::timestamptz)), "seq")
WHERE "status" = 'queued';
