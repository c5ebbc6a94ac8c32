// Use case: keep leases alive for the calls a worker is handling, and take back the calls of
// workers that stopped renewing theirs (crashed, killed, partitioned).
//
// The rule: a call whose lease expired BEFORE it was dialled (still pending/queued) is simply
// requeued; a call whose lease expired AFTER it was dialled may exist at the provider, so it is
// never dialled again: it is settled (with the provider's result when it can tell, else as failed
// by the system) through applyCallWrites, or adopted (a provider that still has it in flight and
// can report on it: a new lease for the recovering worker), both conditional on the lease still
// being expired.
// (This worker marks a call dialled in the very transaction that leases it, so an undialled call
// with a lease only comes from elsewhere; the rule still holds for it.)
import type { AppDeps } from '../../deps.ts';
import type { CallStatus } from '../../domain/call-state.ts';
import { runStatement } from '../../db/sql-statement.ts';
import { isDeadlock } from '../../db/sql-transaction.ts';

/** Extends this worker's leases; returns the calls it still holds (the others were taken over). */
export async function renewLeases(deps: Pick<AppDeps, 'db'>, workerId: string, callIds: string[], expiresAt: Date): Promise<Set<string>> {
  if (callIds.length === 0) return new Set();
  for (let attempt = 1; ; attempt++) {
    try {
      const rows = await runStatement<{ id: string }>(
        deps.db,
        `UPDATE calls SET lease_expires_at = $3::timestamptz WHERE id = ANY($1::text[]) AND lease_owner = $2 RETURNING id`,
        [callIds, workerId, expiresAt.toISOString()],
      );
      return new Set(rows.map((r) => r.id));
    } catch (e) {
      // The renewal touches many rows the worker's own group commits also lock, in whatever order
      // the plan visits them; PostgreSQL breaks such a deadlock by failing one side. Try again.
      if (!isDeadlock(e) || attempt >= 3) throw e;
    }
  }
}

/**
 * The proof a worker needs before it acts on a call at its provider when its last one has run short
 * (docs/dispatch.md "Ownership"): the lease, extended to `expiresAt`, only while `workerId` still
 * holds it - and, before a dial, only while the call is still in the dial it claimed (`dial`: its
 * status and attempts). false: another worker took the call, or it moved on.
 */
export async function confirmLease(
  deps: Pick<AppDeps, 'db'>,
  c: { callId: string; workerId: string; expiresAt: Date; dial?: { status: CallStatus; attempts: number } },
): Promise<boolean> {
  const rows = await runStatement<{ id: string }>(
    deps.db,
    `UPDATE calls SET lease_expires_at = GREATEST(lease_expires_at, $3::timestamptz)
      WHERE id = $1 AND lease_owner = $2 AND ($4::text IS NULL OR (status = $4 AND attempts = $5))
      RETURNING id`,
    [c.callId, c.workerId, c.expiresAt.toISOString(), c.dial?.status ?? null, c.dial?.attempts ?? null],
  );
  return rows.length > 0;
}

/** Not-yet-dialled calls whose lease expired go back to the queue (queued -> queued, history kept). */
export async function requeueExpiredUndialled(deps: Pick<AppDeps, 'db'>, now: Date, limit = 500): Promise<{ id: string; batchId: string }[]> {
  const rows = await runStatement<{ id: string; batch_id: string }>(
    deps.db,
    `WITH sel AS (
       SELECT id, status, lease_owner FROM calls
        WHERE status IN ('pending', 'queued') AND lease_expires_at < $1::timestamptz
        LIMIT $2 FOR UPDATE SKIP LOCKED
     ), upd AS (
       UPDATE calls c SET lease_owner = NULL, lease_expires_at = NULL, updated_at = $1::timestamptz
         FROM sel WHERE c.id = sel.id
       RETURNING c.id, c.batch_id, c.account_id, c.status, sel.lease_owner
     ), ev AS (
       INSERT INTO call_events (account_id, call_id, from_status, to_status, detail, at)
       SELECT account_id, id, status, status,
              jsonb_build_object('event', 'requeue', 'reason', 'lease_expired', 'previous_worker', lease_owner), $1::timestamptz
         FROM upd
       RETURNING 1
     )
     SELECT id, batch_id FROM upd`,
    [now.toISOString(), limit],
  );
  return rows.map((r) => ({ id: r.id, batchId: r.batch_id }));
}

export interface LostCall {
  id: string;
  batchId: string;
  accountId: string;
  status: CallStatus;
  leaseOwner: string;
  leaseExpiresAt: Date;
  providerCallId: string | null;
  /** The provider that placed the dial (calls.provider) when its id is stored, else the account's. */
  provider: string;
  /**
   * Without a stored provider call id, the account's provider route (empty: none): the dial may
   * have been placed through any of them (docs/providers.md "Routing and failover").
   */
  route: string[];
  /** When the current dial (the alternate number's, after it) started; null when unknown. */
  dialledAt: Date | null;
  /** What a worker adopting the call (provider still has it in flight) needs to carry on. */
  attempts: number;
  phoneNumber: string;
  dialedNumber: string | null;
  alternatePhone: string | null;
  usedAlternate: boolean;
  timezone: string | null;
  externalId: string;
  name: string | null;
  metadata: Record<string, unknown>;
  /** Its batch's windows version now: settings cached for an older one are stale. */
  windowsVersion: number;
}

const IN_FLIGHT = ['ringing', 'answered', 'in_progress'] as const;

// The oldest expired leases of each in-flight status, read in lease order from
// `(status, lease_expires_at)` and cut to the limit, then merged: one range per status, so a pass
// reads at most `limit` (plus excluded) entries of each. `status IN (…) ORDER BY lease_expires_at`
// could not take the index's order across three statuses: it read every expired lease and sorted
// them (28,050 lost calls at 945,000: 64 ms a recovery pass, bench:indexes).
const LOST_CALLS_SQL = `
WITH lost AS (${IN_FLIGHT.map(
  (status) => `
  (SELECT id, lease_expires_at FROM calls
    WHERE status = '${status}' AND lease_expires_at < $1::timestamptz AND NOT (id = ANY($2::text[]))
    ORDER BY lease_expires_at LIMIT $3)`,
).join('\n  UNION ALL')}
  ORDER BY lease_expires_at LIMIT $3
)
SELECT c.id, c.batch_id, c.account_id, c.status, c.lease_owner, c.lease_expires_at, c.provider_call_id,
       CASE WHEN c.provider_call_id IS NOT NULL AND c.provider IS NOT NULL THEN c.provider ELSE a.provider END AS provider,
       CASE WHEN c.provider_call_id IS NULL
            THEN ARRAY(SELECT p.provider FROM account_providers p WHERE p.account_id = c.account_id ORDER BY p.position)
            ELSE '{}'::text[] END AS route,
       COALESCE((SELECT e.at FROM call_events e
                  WHERE e.call_id = c.id AND e.detail->>'event' = 'dial'
                  ORDER BY e.id DESC LIMIT 1), c."timestamp") AS dialled_at,
       c.attempts, c.phone_number, c.dialed_number, c.alternate_phone, c.used_alternate, c.timezone,
       c.external_id, c.name, c.metadata, b.windows_version
  FROM lost l JOIN calls c ON c.id = l.id JOIN accounts a ON a.id = c.account_id JOIN batches b ON b.id = c.batch_id
 ORDER BY c.lease_expires_at`;

/** Dialled calls whose worker stopped renewing the lease (excluding calls the caller is handling itself). */
export async function findLostCalls(deps: Pick<AppDeps, 'db'>, now: Date, excludeIds: string[], limit = 200): Promise<LostCall[]> {
  const rows = await runStatement<{
    id: string;
    batch_id: string;
    account_id: string;
    status: CallStatus;
    lease_owner: string;
    lease_expires_at: Date;
    provider_call_id: string | null;
    provider: string;
    route: string[] | null;
    dialled_at: Date | null;
    attempts: number;
    phone_number: string;
    dialed_number: string | null;
    alternate_phone: string | null;
    used_alternate: boolean;
    timezone: string | null;
    external_id: string;
    name: string | null;
    metadata: Record<string, unknown> | null;
    windows_version: number;
  }>(deps.db, LOST_CALLS_SQL, [now.toISOString(), excludeIds, limit]);
  return rows.map((r) => ({
    id: r.id,
    batchId: r.batch_id,
    accountId: r.account_id,
    status: r.status,
    leaseOwner: r.lease_owner,
    leaseExpiresAt: new Date(r.lease_expires_at),
    providerCallId: r.provider_call_id,
    provider: r.provider,
    route: r.route ?? [],
    dialledAt: r.dialled_at ? new Date(r.dialled_at) : null,
    attempts: r.attempts,
    phoneNumber: r.phone_number,
    dialedNumber: r.dialed_number,
    alternatePhone: r.alternate_phone,
    usedAlternate: r.used_alternate,
    timezone: r.timezone,
    externalId: r.external_id,
    name: r.name,
    metadata: r.metadata ?? {},
    windowsVersion: r.windows_version,
  }));
}

/**
 * A stopping worker hands these calls over (still talking at a provider that lets another worker
 * adopt them, or awaiting the provider's analysis): their leases expire now, so the next worker's
 * recovery takes them without waiting out the lease.
 */
export async function expireLeasesNow(deps: Pick<AppDeps, 'db'>, workerId: string, callIds: string[], now: Date): Promise<number> {
  if (callIds.length === 0) return 0;
  const rows = await runStatement<{ id: string }>(
    deps.db,
    `UPDATE calls SET lease_expires_at = $3::timestamptz WHERE id = ANY($1::text[]) AND lease_owner = $2 RETURNING id`,
    [callIds, workerId, new Date(now.getTime() - 1).toISOString()],
  );
  return rows.length;
}

/**
 * A lost call the provider still has in flight is taken over by `workerId` (new lease, history row)
 * instead of being settled: only while the old lease is still the expired one it saw.
 */
export async function adoptLostCall(
  deps: Pick<AppDeps, 'db'>,
  lost: Pick<LostCall, 'id' | 'status' | 'leaseOwner'>,
  adoption: { workerId: string; now: Date; leaseMs: number; providerCallId: string; provider: string; detail: Record<string, unknown> },
): Promise<boolean> {
  const rows = await runStatement<{ id: string }>(
    deps.db,
    `WITH upd AS (
       UPDATE calls SET lease_owner = $4, lease_expires_at = $5::timestamptz,
              provider_call_id = COALESCE(provider_call_id, $6), updated_at = $3::timestamptz,
              provider = CASE WHEN provider_call_id IS NULL THEN $9 ELSE provider END
        WHERE id = $1 AND status = $2 AND lease_owner = $7 AND lease_expires_at < $3::timestamptz
       RETURNING id, account_id, status
     ), ev AS (
       INSERT INTO call_events (account_id, call_id, from_status, to_status, detail, at)
       SELECT account_id, id, status, status, $8::jsonb, $3::timestamptz FROM upd
       RETURNING 1
     )
     SELECT id FROM upd`,
    [
      lost.id,
      lost.status,
      adoption.now.toISOString(),
      adoption.workerId,
      new Date(adoption.now.getTime() + adoption.leaseMs).toISOString(),
      adoption.providerCallId,
      lost.leaseOwner,
      JSON.stringify(adoption.detail),
      adoption.provider,
    ],
  );
  return rows.length > 0;
}

export interface AnalysisCandidate {
  id: string;
  batchId: string;
  accountId: string;
  status: CallStatus;
  hangupBy: string | null;
  transcript: string | null;
  name: string | null;
  metadata: Record<string, unknown>;
  providerCallId: string | null;
  /** The provider that placed it (calls.provider); null: the account's. */
  provider: string | null;
}

/**
 * Ended calls whose analysis was left unfinished by a worker that went away: taken over with a new
 * lease so the analysis runs again. Ended calls with a stale lease and nothing left to do just lose it.
 */
export async function takeOverStaleAnalysis(
  deps: Pick<AppDeps, 'db'>,
  workerId: string,
  now: Date,
  leaseMs: number,
  limit = 200,
): Promise<AnalysisCandidate[]> {
  const rows = await runStatement<{
    id: string;
    batch_id: string;
    account_id: string;
    status: CallStatus;
    hangup_by: string | null;
    llm_transcript: string | null;
    name: string | null;
    metadata: Record<string, unknown> | null;
    transcript_status: string | null;
    provider_call_id: string | null;
    provider: string | null;
  }>(
    deps.db,
    `WITH sel AS (
         SELECT id FROM calls
          WHERE status IN ('completed', 'failed', 'no_answer', 'busy', 'cancelled') AND lease_expires_at < $1::timestamptz
          LIMIT $4 FOR UPDATE SKIP LOCKED
       ), upd AS (
         UPDATE calls c SET
           lease_owner = CASE WHEN c.transcript_status IN ('pending', 'processing') THEN $2 ELSE NULL END,
           lease_expires_at = CASE WHEN c.transcript_status IN ('pending', 'processing') THEN $3::timestamptz ELSE NULL END,
           updated_at = $1::timestamptz
         FROM sel WHERE c.id = sel.id
         RETURNING c.id, c.batch_id, c.account_id, c.status, c.hangup_by, c.llm_transcript, c.name, c.metadata, c.transcript_status, c.provider_call_id, c.provider
       )
       SELECT * FROM upd WHERE transcript_status IN ('pending', 'processing')`,
    [now.toISOString(), workerId, new Date(now.getTime() + leaseMs).toISOString(), limit],
  );
  return rows.map((r) => ({
    id: r.id,
    batchId: r.batch_id,
    accountId: r.account_id,
    status: r.status,
    hangupBy: r.hangup_by,
    transcript: r.llm_transcript,
    name: r.name,
    metadata: r.metadata ?? {},
    providerCallId: r.provider_call_id,
    provider: r.provider,
  }));
}

/** Batches' current statuses (the worker hangs up in-flight calls of cancelled batches). */
export async function batchStatuses(deps: Pick<AppDeps, 'db'>, batchIds: string[]): Promise<Map<string, string>> {
  if (batchIds.length === 0) return new Map();
  const rows = await runStatement<{ id: string; status: string }>(deps.db, 'SELECT id, status FROM batches WHERE id = ANY($1::text[])', [batchIds]);
  return new Map(rows.map((r) => [r.id, r.status]));
}
