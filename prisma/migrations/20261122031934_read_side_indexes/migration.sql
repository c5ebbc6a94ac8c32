-- DropIndex
DROP INDEX "calls_account_id_agent_id_created_at_idx";

-- CreateIndex
CREATE INDEX "calls_batch_id_transcript_status_status_seq_idx" ON "calls"("batch_id", "transcript_status", "status", "seq");

-- CreateIndex
CREATE INDEX "calls_account_id_agent_id_created_at_id_idx" ON "calls"("account_id", "agent_id", "created_at" DESC, "id" DESC);

