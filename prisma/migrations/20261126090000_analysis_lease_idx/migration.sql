-- The worker's takeover of stale analyses (dispatch/store/lease-recovery.ts takeOverStaleAnalysis):
-- ended calls still holding a lease, i.e. calls whose analysis is running. Few at any time, so the
-- index is small and written only when a call ends with its analysis due. Without it PostgreSQL
-- read the whole table on every recovery pass (514 ms at 945,000 calls, 0 rows): it multiplies the
-- ended statuses' share of the table by the lease condition's and expects LIMIT to stop early.
CREATE INDEX "calls_analysis_lease_idx" ON "calls"("lease_expires_at")
WHERE "lease_expires_at" IS NOT NULL AND "status" IN ('completed', 'failed', 'no_answer', 'busy', 'cancelled');
