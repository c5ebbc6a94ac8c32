-- An account's enforced calling window reaches its running batches (issue 15; docs/campaigns.md):
-- the batch takes the new window, its version is bumped so that workers reload its settings, and
-- `window_reset_cursor` holds the re-placement of its waiting calls until the worker's sweep is done.
ALTER TABLE "batches" ADD COLUMN "recipient_keys" BOOLEAN,
ADD COLUMN "window_reset_cursor" INTEGER,
ADD COLUMN "windows_version" INTEGER NOT NULL DEFAULT 0;

-- The reset sweep's batches: only those being reset (a handful, briefly).
CREATE INDEX "batches_window_reset_idx" ON "batches"("in_progress") WHERE "window_reset_cursor" IS NOT NULL;
