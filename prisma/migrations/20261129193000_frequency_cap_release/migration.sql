-- Calls the frequency cap holds back, by batch: a change of the account's cap releases them at once
-- (services/accounts/release-cap-holds.ts) instead of leaving them to wait out the old cap. Only
-- held calls have an entry, so the index costs nothing for the others.
CREATE INDEX "calls_frequency_cap_wait_idx" ON "calls"("batch_id") WHERE "wait_reason" = 'frequency_cap';
