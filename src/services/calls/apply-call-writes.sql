-- One group of call writes in one statement (call-transitions.ts applyCallWritesTx): each call's
-- change applies only while the writer still holds its lease and the call is in the expected
-- status; its events, dial audits and recording are written only for calls whose change applied,
-- and the batch counters move by what applied. Arrays are one entry per write (u), per event (e),
-- per recording (r) and per audit (a).
WITH u AS (
  SELECT * FROM unnest(
    :call_ids::text[], :owners::text[], :expired_before::timestamptz[], :from_statuses::text[],
    :to_statuses::text[], :releases::bool[], :attempt_increments::int[], :dialed_numbers::text[],
    :used_alternates::bool[], :provider_call_ids::text[], :timestamps::timestamptz[],
    :completed_ats::timestamptz[], :hangup_bys::text[], :disconnect_reasons::text[], :durations::int[],
    :answer_durations::int[], :llm_transcripts::text[], :transcript_statuses::text[], :summaries::text[],
    :outcomes::jsonb[], :recording_availables::bool[], :voicemail_lefts::bool[], :from_numbers::text[], :delta_queued::int[], :delta_in_progress::int[],
    :delta_completed::int[], :delta_failed::int[], :delta_cancelled::int[], :next_attempt_ats::timestamptz[],
    :window_closes_ats::timestamptz[], :wait_reasons::text[], :providers::text[]
  )
    AS u(id, owner, expired_before, from_status, to_status, release, att_inc,
         dialed_number, used_alternate, provider_call_id, ts, completed_at, hangup_by,
         disconnect_reason, duration_seconds, answer_duration_seconds, llm_transcript, transcript_status, summary, outcomes,
         recording_available, voicemail_left, from_number, dq, dip, dc, df, dx, next_attempt_at, window_closes_at, wait_reason, provider)
),
upd AS (
  UPDATE calls c SET
    status = u.to_status,
    lease_owner = CASE WHEN u.release THEN NULL ELSE c.lease_owner END,
    lease_expires_at = CASE WHEN u.release THEN NULL ELSE c.lease_expires_at END,
    attempts = c.attempts + u.att_inc,
    dialed_number = COALESCE(u.dialed_number, c.dialed_number),
    used_alternate = COALESCE(u.used_alternate, c.used_alternate),
    provider_call_id = CASE WHEN u.att_inc > 0 THEN u.provider_call_id ELSE COALESCE(u.provider_call_id, c.provider_call_id) END,
    provider = COALESCE(u.provider, c.provider),
    "timestamp" = COALESCE(c."timestamp", u.ts),
    completed_at = COALESCE(u.completed_at, c.completed_at),
    hangup_by = COALESCE(u.hangup_by, c.hangup_by),
    disconnect_reason = COALESCE(u.disconnect_reason, c.disconnect_reason),
    duration_seconds = COALESCE(u.duration_seconds, c.duration_seconds),
    answer_duration_seconds = COALESCE(u.answer_duration_seconds, c.answer_duration_seconds),
    llm_transcript = COALESCE(u.llm_transcript, c.llm_transcript),
    transcript_status = COALESCE(u.transcript_status, c.transcript_status),
    summary = COALESCE(u.summary, c.summary),
    outcomes = COALESCE(u.outcomes, c.outcomes),
    recording_available = COALESCE(u.recording_available, c.recording_available),
    voicemail_left = COALESCE(u.voicemail_left, c.voicemail_left),
    from_number = COALESCE(u.from_number, c.from_number),
    next_attempt_at = COALESCE(u.next_attempt_at, c.next_attempt_at),
    window_closes_at = COALESCE(u.window_closes_at, c.window_closes_at),
    wait_reason = COALESCE(u.wait_reason, c.wait_reason),
    -- Always moves, even at an instant the row already has (a frozen or coarse clock): an unchanged
    -- value would let the calls_touch_updated_at trigger take the database clock instead.
    updated_at = GREATEST(:now::timestamptz, c.updated_at + interval '1 millisecond')
  FROM u
  WHERE c.id = u.id
    AND c.status = u.from_status
    AND c.lease_owner = u.owner
    AND (u.expired_before IS NULL OR c.lease_expires_at < u.expired_before)
  RETURNING c.id, c.batch_id, u.dq, u.dip, u.dc, u.df, u.dx
),
ev AS (
  INSERT INTO call_events (account_id, call_id, from_status, to_status, detail, at)
  SELECT e.account_id, e.call_id, e.from_status, e.to_status, e.detail, e.at
    FROM unnest(:event_account_ids::text[], :event_call_ids::text[], :event_froms::text[], :event_tos::text[], :event_details::jsonb[], :event_ats::timestamptz[])
      WITH ORDINALITY AS e(account_id, call_id, from_status, to_status, detail, at, ord)
   WHERE e.call_id IN (SELECT id FROM upd)
   ORDER BY e.ord
  RETURNING 1
),
aud AS (
  INSERT INTO dial_audits (account_id, batch_id, call_id, attempt, number, alternate, dialled_at, allowed_by, zones, closes_at, detail)
  SELECT a.account_id, a.batch_id, a.call_id, a.attempt, a.number, a.alternate, a.dialled_at, a.allowed_by,
         string_to_array(a.zones, ','), a.closes_at, a.detail
    FROM unnest(:audit_account_ids::text[], :audit_batch_ids::text[], :audit_call_ids::text[], :audit_attempts::int[], :audit_numbers::text[], :audit_alternates::bool[], :audit_dialled_ats::timestamptz[], :audit_allowed_bys::text[],
                :audit_zones::text[], :audit_closes_ats::timestamptz[], :audit_details::jsonb[])
      WITH ORDINALITY AS a(account_id, batch_id, call_id, attempt, number, alternate, dialled_at, allowed_by, zones, closes_at, detail, ord)
   WHERE a.call_id IN (SELECT id FROM upd)
   ORDER BY a.ord
  RETURNING 1
),
rec AS (
  -- Base64 text: PGlite does not accept bytea[] parameters.
  INSERT INTO recordings (call_id, account_id, content_type, data, source_url, created_at)
  SELECT r.call_id, r.account_id, r.content_type, decode(r.data, 'base64'), r.source_url, :now::timestamptz
    FROM unnest(:recording_call_ids::text[], :recording_account_ids::text[], :recording_content_types::text[], :recording_data::text[], :recording_source_urls::text[]) AS r(call_id, account_id, content_type, data, source_url)
   WHERE r.call_id IN (SELECT id FROM upd)
  ON CONFLICT (call_id) DO NOTHING
  RETURNING 1
),
d AS (
  SELECT batch_id, sum(dq)::int AS dq, sum(dip)::int AS dip, sum(dc)::int AS dc, sum(df)::int AS df, sum(dx)::int AS dx
    FROM upd GROUP BY batch_id
),
cnt AS (
  -- Last, after the calls (the lock order every writer uses, see claim-calls.ts): the hot batch
  -- row stays locked only from here to the commit.
  UPDATE batches b SET
    queued = b.queued + d.dq, in_progress = b.in_progress + d.dip, completed = b.completed + d.dc,
    failed = b.failed + d.df, cancelled = b.cancelled + d.dx, updated_at = :now::timestamptz
  FROM d
  WHERE b.id = d.batch_id AND (d.dq <> 0 OR d.dip <> 0 OR d.dc <> 0 OR d.df <> 0 OR d.dx <> 0)
  RETURNING b.id, b.queued, b.in_progress, b.completed_at
)
SELECT 'call' AS kind, id, 0 AS queued, 0 AS in_progress FROM upd
UNION ALL
SELECT 'batch', id, queued, in_progress FROM cnt WHERE queued = 0 AND in_progress = 0 AND completed_at IS NULL
