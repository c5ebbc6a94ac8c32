-- The claim (claim-calls.ts): for each batch of :batch_ids, take up to its count in :batch_takes of
-- the calls due at :now, mark them dialled under :worker_id's lease and count them, in one statement.
-- Named parameters, turned positional once at load (src/db/named-sql.ts); claimParams names them.
WITH alloc AS (
  -- A batch paused or cancelled since the read drops out here. Its row is not locked until the
  -- counter update at the very end (the order every writer uses: calls, then their batch), so the
  -- hottest row of a running batch stays locked only from there to the commit.
  -- An expired batch dials no more: the expiry sweep ends its waiting calls. Nor does one whose
  -- calls are being re-placed under a changed window (reset-windows.ts).
  SELECT a.*, b.windows_version FROM unnest(:batch_ids::text[], :batch_takes::int[], :batch_windowed::bool[]) AS a(batch_id, n, windowed)
    JOIN batches b ON b.id = a.batch_id AND b.status = ANY(:dispatching_statuses::text[])
                  AND (b.expires_at IS NULL OR b.expires_at > :now::timestamptz) AND b.window_reset_cursor IS NULL
),
picked AS (
  -- Calls put back in line (queued) go first, those due earliest first, as one range of
  -- calls_requeued_due_idx that ends at now: retries still waiting are never read. Then those
  -- never dialled (pending): in a plain batch in submission order straight off the
  -- (batch_id, status, seq) index; in a windowed batch (one of the two branches runs, the other's
  -- condition on a.windowed is a one-time filter) those whose window opened, open since the create
  -- first, then by opening, window close and submission, as the range of calls_window_open_idx
  -- that ends at now: calls waiting for their window are never read, windows closed and not yet
  -- swept are skipped inside the index. Under the outer LIMIT a branch only runs, and only locks
  -- rows, when those before it come up short.
  -- A number put on the account's do-not-call list after the create is never dialled: the call
  -- is cancelled here instead (one primary-key probe per claimed call). So is one the national
  -- registry or a reassignment refuses (registry_refuses_call, migration consent_and_registry:
  -- nothing for a number outside +1, a few primary-key probes for one inside). A retry that waited for
  -- its alternate number's window (wait_reason :alternate_wait_reason) dials the alternate: that number is the
  -- one checked, capped and dialled.
  SELECT p.id, p.status AS old_status, p.phone_number AS number, p.alternate,
         (EXISTS (SELECT 1 FROM suppressions s WHERE s.account_id = :account_id AND s.phone_number = p.phone_number)
           OR registry_refuses_call(p.phone_number, p.id)) AS suppressed
    FROM alloc a
    CROSS JOIN LATERAL (
      SELECT * FROM (
        SELECT c.id, c.status, COALESCE(CASE WHEN c.wait_reason = :alternate_wait_reason THEN c.alternate_phone END, c.phone_number) AS phone_number,
               (c.wait_reason = :alternate_wait_reason AND c.alternate_phone IS NOT NULL) IS TRUE AS alternate
          FROM calls c
         WHERE c.batch_id = a.batch_id AND c.status = 'queued' AND c.lease_owner IS NULL
           AND COALESCE(c.next_attempt_at, '-infinity'::timestamptz) <= :now::timestamptz
           AND (c.window_closes_at IS NULL OR c.window_closes_at > :now::timestamptz)
         ORDER BY COALESCE(c.next_attempt_at, '-infinity'::timestamptz), c.seq
         LIMIT a.n
         FOR UPDATE SKIP LOCKED) requeued
      UNION ALL
      SELECT * FROM (
        SELECT c.id, c.status, c.phone_number, false FROM calls c
         WHERE NOT a.windowed AND c.batch_id = a.batch_id AND c.status = 'pending' AND c.lease_owner IS NULL
           AND (c.next_attempt_at IS NULL OR c.next_attempt_at <= :now::timestamptz)
         ORDER BY c.seq
         LIMIT a.n
         FOR UPDATE SKIP LOCKED) never_dialled
      UNION ALL
      SELECT * FROM (
        SELECT c.id, c.status, c.phone_number, false FROM calls c
         WHERE a.windowed AND c.batch_id = a.batch_id AND c.status = 'pending' AND c.lease_owner IS NULL
           AND c.window_closes_at IS NOT NULL AND c.window_closes_at > :now::timestamptz
           AND COALESCE(c.next_attempt_at, '-infinity'::timestamptz) <= :now::timestamptz
         ORDER BY COALESCE(c.next_attempt_at, '-infinity'::timestamptz), c.window_closes_at, c.seq
         LIMIT a.n
         FOR UPDATE SKIP LOCKED) in_window
      LIMIT a.n
    ) p
),
capped AS (
  -- The account's frequency cap (:cap_max_calls dials per number in :cap_period_seconds seconds; both null without one, and
  -- then this reads nothing): a picked call whose number has had :cap_max_calls dials in the period, counting
  -- the picks before it in this statement, is not dialled. It waits until enough of those dials
  -- leave the period: the k-th oldest's time + the period, or now + the period when the k-th is
  -- one of this statement's own. A range of number_dials' primary key per picked call (the dials
  -- in the period: at most :cap_max_calls unless the cap was lowered), one more per call held back.
  SELECT w.id, w.phone_number,
         COALESCE((SELECT d.dialled_at FROM number_dials d
                    WHERE d.account_id = :account_id AND d.phone_number = w.phone_number
                      AND d.dialled_at > :now::timestamptz - :cap_period_seconds::int * interval '1 second'
                    ORDER BY d.dialled_at OFFSET w.k - 1 LIMIT 1), :now::timestamptz)
           + :cap_period_seconds::int * interval '1 second' AS next_attempt_at
    FROM (
      SELECT c.id, p.number AS phone_number,
             n.dials + row_number() OVER (PARTITION BY p.number ORDER BY c.batch_id, c.seq) - :cap_max_calls::int AS k
        FROM picked p JOIN calls c ON c.id = p.id
        CROSS JOIN LATERAL (
          SELECT count(*)::int AS dials FROM number_dials d
           WHERE d.account_id = :account_id AND d.phone_number = p.number
             AND d.dialled_at > :now::timestamptz - :cap_period_seconds::int * interval '1 second') n
       WHERE :cap_max_calls::int IS NOT NULL AND NOT p.suppressed
    ) w
   WHERE w.k > 0
),
waits AS (
  -- Still waiting (pending or queued, in the queued counter), until the cap lets it through.
  UPDATE calls c SET next_attempt_at = k.next_attempt_at, updated_at = :now::timestamptz,
         wait_reason = CASE WHEN c.wait_reason = :alternate_wait_reason THEN c.wait_reason ELSE :cap_wait_reason END
    FROM capped k
   WHERE c.id = k.id
  RETURNING 1
),
upd AS (
  UPDATE calls c SET status = 'ringing', lease_owner = :worker_id, lease_expires_at = :lease_expires_at::timestamptz,
         attempts = c.attempts + 1, dialed_number = p.number, used_alternate = p.alternate, next_attempt_at = NULL,
         "timestamp" = COALESCE(c."timestamp", :now::timestamptz), updated_at = :now::timestamptz,
         wait_reason = NULL, provider_call_id = NULL
    FROM picked p
   WHERE c.id = p.id AND NOT p.suppressed
     AND p.id NOT IN (SELECT id FROM capped)
  RETURNING c.id, c.batch_id, c.account_id, c.seq, c.phone_number, c.alternate_phone, c.external_id, c.name,
            c.metadata, c.attempts, c.timezone, p.old_status, p.number AS dialled_number, p.alternate, c.contact_timezone
),
sup AS (
  UPDATE calls c SET status = 'cancelled', completed_at = :now::timestamptz, disconnect_reason = :suppressed_reason,
         updated_at = :now::timestamptz,
         next_attempt_at = NULL, wait_reason = NULL
    FROM picked p
   WHERE c.id = p.id AND p.suppressed
  RETURNING c.id, c.batch_id, c.account_id, c.seq, c.phone_number, c.attempts, p.old_status, p.number AS dialled_number, p.alternate
),
dials AS (
  -- What the frequency cap counts: only written for an account that has one.
  INSERT INTO number_dials (account_id, phone_number, dialled_at, call_id)
  SELECT :account_id, dialled_number, :now::timestamptz, id FROM upd WHERE :cap_max_calls::int IS NOT NULL
  -- A call claimed again at the instant of its last dial (a clock that stands still) is one dial.
  ON CONFLICT DO NOTHING
  RETURNING 1
),
ev AS (
  INSERT INTO call_events (account_id, call_id, from_status, to_status, detail, at)
  SELECT account_id, id, old_status, to_status, detail, :now::timestamptz FROM (
    SELECT account_id, id, old_status, 'ringing' AS to_status, batch_id, seq,
           jsonb_build_object('event', 'dial', 'number', dialled_number, 'attempt', attempts, 'alternate', alternate, 'worker', :worker_id::text) AS detail
      FROM upd
    UNION ALL
    SELECT account_id, id, old_status, 'cancelled', batch_id, seq, jsonb_build_object('event', 'suppressed', 'number', dialled_number)
      FROM sup
  ) e ORDER BY batch_id, seq
  RETURNING 1
),
cnt AS (
  -- n calls dialled, m cancelled as suppressed; the counters' sum is unchanged either way.
  UPDATE batches b SET
    queued = b.queued + :dial_queued_delta::int * d.n + :suppress_queued_delta::int * d.m, in_progress = b.in_progress + :dial_in_progress_delta::int * d.n,
    cancelled = b.cancelled + :suppress_cancelled_delta::int * d.m,
    status = CASE WHEN d.n > 0 AND b.status IN ('queued', 'dispatching') THEN 'running' ELSE b.status END,
    started_at = CASE WHEN d.n > 0 THEN COALESCE(b.started_at, :now::timestamptz) ELSE b.started_at END,
    updated_at = :now::timestamptz
  FROM (SELECT batch_id, count(*) FILTER (WHERE NOT s)::int AS n, count(*) FILTER (WHERE s)::int AS m
          FROM (SELECT batch_id, false AS s FROM upd UNION ALL SELECT batch_id, true FROM sup) x
         GROUP BY batch_id) d
  WHERE b.id = d.batch_id
  RETURNING 1
)
SELECT id, u.batch_id, account_id, seq, phone_number, alternate_phone, external_id, name, metadata, attempts, timezone,
       a.windows_version, false AS suppressed, dialled_number, alternate, contact_timezone
  FROM upd u JOIN alloc a ON a.batch_id = u.batch_id
UNION ALL
SELECT id, batch_id, account_id, seq, phone_number, NULL, NULL, NULL, NULL, attempts, NULL, 0, true, dialled_number, alternate, NULL FROM sup
ORDER BY batch_id, seq
