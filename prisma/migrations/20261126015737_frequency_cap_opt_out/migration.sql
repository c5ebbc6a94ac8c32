-- Issue 15: an account's frequency cap (dials per number per period, across its batches), the
-- dials it counts, why a waiting call waits, and an agent's opt-out outcome key (docs/campaigns.md).
-- AlterTable
ALTER TABLE "accounts" ADD COLUMN     "frequency_cap_max_calls" INTEGER,
ADD COLUMN     "frequency_cap_period_seconds" INTEGER;

-- Set together or not at all, within the bounds the API enforces (src/domain/frequency-cap.ts).
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_frequency_cap_check" CHECK (
  ("frequency_cap_max_calls" IS NULL AND "frequency_cap_period_seconds" IS NULL)
  OR ("frequency_cap_max_calls" BETWEEN 1 AND 100 AND "frequency_cap_period_seconds" BETWEEN 3600 AND 2592000));

-- AlterTable
ALTER TABLE "agents" ADD COLUMN     "opt_out_outcome_key" TEXT;

-- AlterTable
ALTER TABLE "calls" ADD COLUMN     "wait_reason" TEXT;

-- CreateTable
CREATE TABLE "number_dials" (
    "account_id" TEXT NOT NULL,
    "phone_number" TEXT NOT NULL,
    "dialled_at" TIMESTAMPTZ(3) NOT NULL,
    "call_id" TEXT NOT NULL,

    CONSTRAINT "number_dials_pkey" PRIMARY KEY ("account_id","phone_number","dialled_at","call_id")
);

-- CreateIndex
CREATE INDEX "number_dials_dialled_at_idx" ON "number_dials"("dialled_at");

-- AddForeignKey
ALTER TABLE "number_dials" ADD CONSTRAINT "number_dials_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

