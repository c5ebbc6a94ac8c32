-- The claim's range over a windowed batch's pending calls whose window has opened, in the order it
-- takes them: open since the create first, then by opening, window close and submission. The range
-- ends at now, so a call still waiting for its window is never read (by window close, as the
-- window sweep reads them, every waiting call closing before the last open one was read, and all
-- of them whenever fewer calls than asked for were open: bench:dispatch scenario 5).
CREATE INDEX "calls_window_open_idx" ON "calls"("batch_id", (COALESCE("next_attempt_at", '-infinity'::timestamptz)), "window_closes_at", "seq")
WHERE "window_closes_at" IS NOT NULL AND "status" = 'pending';
