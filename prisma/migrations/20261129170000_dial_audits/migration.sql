-- Evidence of every dial (issue 33 point 5, domain/dial-audit.ts): one row per dial, written by the
-- worker in the statement that records the dial (services/calls/call-transitions.ts), only for a
-- call whose lease it still holds. Deleted with its call (retention, account deletion) by the
-- foreign key's cascade.
CREATE TABLE "dial_audits" (
    "id" BIGSERIAL NOT NULL,
    "account_id" TEXT NOT NULL,
    "batch_id" TEXT NOT NULL,
    "call_id" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "number" TEXT NOT NULL,
    "alternate" BOOLEAN NOT NULL,
    "dialled_at" TIMESTAMPTZ(3) NOT NULL,
    "allowed_by" TEXT NOT NULL,
    "zones" TEXT[],
    "closes_at" TIMESTAMPTZ(3),
    "detail" JSONB NOT NULL,

    CONSTRAINT "dial_audits_pkey" PRIMARY KEY ("id")
);

-- A call's entries in order (GraphQL Call.dialAudit, REST .../calls/{call_id}/dial-audit).
CREATE INDEX "dial_audits_call_id_id_idx" ON "dial_audits"("call_id", "id");

-- A batch's entries (its compliance report).
CREATE INDEX "dial_audits_batch_id_dialled_at_idx" ON "dial_audits"("batch_id", "dialled_at");

ALTER TABLE "dial_audits" ADD CONSTRAINT "dial_audits_call_id_fkey" FOREIGN KEY ("call_id") REFERENCES "calls"("id") ON DELETE CASCADE ON UPDATE CASCADE;
