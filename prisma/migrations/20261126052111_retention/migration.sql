-- Retention (src/services/retention/). Finished batches oldest first by when their last call
-- ended: BATCH_RETENTION_DAYS reads the range older than its cutoff and nothing else (without it,
-- every run reads every finished batch through batches_status_scheduled_at_idx). Only finished
-- batches are in it, and a batch enters it once, when it closes: the counter updates of running
-- batches change no indexed column and stay HOT.
CREATE INDEX IF NOT EXISTS "batches_finished_idx" ON "batches"("completed_at", "id")
WHERE "status" IN ('completed', 'cancelled');

-- Recordings by when they were stored: RECORDING_RETENTION_DAYS drops the oldest. On a large
-- recordings table build it first by hand without blocking writes
-- (CREATE INDEX CONCURRENTLY recordings_created_at_idx ON recordings (created_at)); this then
-- does nothing (docs/deployment.md#growth-and-retention).
CREATE INDEX IF NOT EXISTS "recordings_created_at_idx" ON "recordings"("created_at");
