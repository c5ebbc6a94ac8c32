-- Call records are read through their batches (services/calls/call-record-ranges.ts): a batch's
-- calls share its account, agent and created_at and are numbered by seq in id order, so pages
-- and counts read `batches` and ranges of (batch_id, seq). These two indexes had no other reader,
-- and every created call wrote an entry into each (docs/indexes.md).
DROP INDEX "calls_account_id_created_at_id_idx";
DROP INDEX "calls_account_id_agent_id_created_at_id_idx";
