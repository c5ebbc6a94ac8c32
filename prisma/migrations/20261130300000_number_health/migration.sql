-- Number health of caller-ID numbers (docs/campaigns.md "Number health").
-- Per DID: flagged by the operator or its provider (rested while set), rested until when (null:
-- not rested; unavailable to the caller-ID chooser until then), why, and the first UTC day its
-- calls are judged on again after a rest (null: all days of the window).
ALTER TABLE "did_numbers"
  ADD COLUMN "flagged" BOOLEAN NOT NULL DEFAULT false,
  ADD COLUMN "flagged_reason" TEXT,
  ADD COLUMN "rested_until" TIMESTAMPTZ(3),
  ADD COLUMN "rest_reason" TEXT,
  ADD COLUMN "judged_from" DATE,
  ADD CONSTRAINT "did_numbers_flagged_reason_check" CHECK (char_length("flagged_reason") <= 200),
  ADD CONSTRAINT "did_numbers_rest_reason_check" CHECK ("rest_reason" IS NULL OR "rest_reason" IN ('low_answer_rate', 'flagged'));

-- Attempts ended per DID per UTC day (the day the attempt ended), answered and short among them.
-- Added to by the worker's attempt-end write, in its transaction and only when it applies (a
-- worker that lost the call's lease adds nothing); days before the window are pruned by the job.
CREATE TABLE "did_daily_stats" (
  "did_id" TEXT NOT NULL,
  "day" DATE NOT NULL,
  "dials" INTEGER NOT NULL DEFAULT 0,
  "answered" INTEGER NOT NULL DEFAULT 0,
  "short_calls" INTEGER NOT NULL DEFAULT 0,
  CONSTRAINT "did_daily_stats_pkey" PRIMARY KEY ("did_id", "day"),
  CONSTRAINT "did_daily_stats_did_id_fkey" FOREIGN KEY ("did_id") REFERENCES "did_numbers"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
-- The prune's range.
CREATE INDEX "did_daily_stats_day_idx" ON "did_daily_stats"("day");
