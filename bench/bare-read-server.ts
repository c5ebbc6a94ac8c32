// The bare bound of bench/read-api.ts (not a test, not the service): a node:http server that answers
// the REST list pages with one SQL statement each (and, as the service, one more for the retry
// reasons of a page that holds waiting calls) through `pg` and JSON.stringify, producing the
// same bytes as the service (read-api.ts checks that before measuring). It does only what the page
// itself needs: no authentication, rate limit, GraphQL, logging or validation beyond the numbers.
//
// Environment: BARE_DATABASE_URL, BARE_ACCOUNT_ID (whose rows are read), BARE_PUBLIC_URL and
// BARE_APP_SECRET (the service's, for the signed recording links), PORT.
import crypto from 'node:crypto';
import http from 'node:http';
import pg from 'pg';
import { retryReason, waitsForRetry } from '../src/domain/call-attempts.ts';

const pool = new pg.Pool({ connectionString: process.env.BARE_DATABASE_URL, max: 10 });
pool.on('error', () => {});
const ACCOUNT = process.env.BARE_ACCOUNT_ID!;
const PUBLIC_URL = process.env.BARE_PUBLIC_URL!;
const SECRET = process.env.BARE_APP_SECRET!;
const BASE = '/api/v1/public';

// The call record's columns, in the contract's order, on `calls c` with `b`, `ag`, `pv` joined.
const CALL_COLUMNS = `c.id AS call_id, c.batch_id, c.external_id, coalesce(c.dialed_number, c.phone_number) AS phone_number,
  c.agent_id, ag.name AS agent_name, c.prompt_version_id AS version_id, pv.name AS version_name, b.voice, c.status,
  c.transcript_status, c.duration_seconds, c.answer_duration_seconds, c.timestamp, c.created_at, c.completed_at, c.hangup_by,
  c.disconnect_reason, c.summary, c.outcomes, c.recording_available, c.llm_transcript, c.attempts, c.next_attempt_at, c.timezone,
  c.phone_number AS primary_phone_number, c.consent_source, c.consent_at, c.consent_text, c.consent_reference, c.voicemail_left`;

// Why the page's waiting calls wait: their last retry entry, read only when some call on it waits.
const LAST_RETRY_SQL = `SELECT DISTINCT ON (call_id) call_id, detail FROM call_events
  WHERE call_id = ANY($1::text[]) AND account_id = $2 AND detail->>'event' = 'retry_scheduled' ORDER BY call_id, id DESC`;

// A batch's page: the batch row (ownership, counters) with the page of its calls laterally joined.
const BATCH_CALLS_SQL = `SELECT b.status AS batch_status, b.queued AS b_queued, b.in_progress AS b_in_progress,
  b.queued + b.in_progress + b.completed + b.failed + b.cancelled AS total, ${CALL_COLUMNS}
  FROM batches b JOIN agents ag ON ag.id = b.agent_id JOIN prompt_versions pv ON pv.id = b.prompt_version_id
  LEFT JOIN LATERAL (SELECT * FROM calls WHERE batch_id = $1 ORDER BY seq LIMIT $3 OFFSET $4) c ON true
  WHERE b.id = $1 AND b.account_id = $2 ORDER BY c.seq`;

// Call records through their batches, as the service reads them (src/services/calls/call-record-ranges.ts):
// a running sum over the range's batches places the page and gives the total, then each batch the
// page overlaps gives a range of seq.
const RECORDS_SQL = `WITH r AS (
    SELECT id, accepted_contacts AS n, sum(accepted_contacts) OVER (ORDER BY created_at DESC, id DESC ROWS UNBOUNDED PRECEDING) AS upto
      FROM batches WHERE account_id = $1 AND created_at >= $2 AND created_at <= $3),
  t AS (SELECT COALESCE(sum(n), 0)::int AS total FROM r),
  p AS (SELECT id, n, upto FROM r WHERE upto > $5 AND upto - n < $5 + $4)
  SELECT t.total, ${CALL_COLUMNS}
  FROM t LEFT JOIN LATERAL (
    SELECT c.*, p.upto FROM p CROSS JOIN LATERAL (
      SELECT * FROM calls WHERE batch_id = p.id
        AND seq BETWEEN p.n - GREATEST(0, $5 - (p.upto - p.n)) - $4 + 1 AND p.n - GREATEST(0, $5 - (p.upto - p.n))
        ORDER BY seq DESC LIMIT $4) c
    ORDER BY p.upto, c.seq DESC LIMIT $4) c ON true
  LEFT JOIN batches b ON b.id = c.batch_id LEFT JOIN agents ag ON ag.id = b.agent_id LEFT JOIN prompt_versions pv ON pv.id = b.prompt_version_id
  ORDER BY c.upto, c.seq DESC`;

const BATCHES_SQL = `SELECT t.total, b.id AS batch_id, b.agent_id, b.prompt_version_id AS version_id, b.status, b.total_contacts,
  b.queued, b.in_progress, b.completed, b.failed, b.cancelled, b.created_at
  FROM (SELECT count(*)::int AS total FROM batches WHERE account_id = $1) t
  LEFT JOIN LATERAL (SELECT * FROM batches WHERE account_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3) b ON true
  ORDER BY b.created_at DESC, b.id DESC`;

type Row = Record<string, unknown>;

function recordingUrl(callId: string): string {
  const expires = Math.ceil(Date.now() / 60_000) * 60 + 3600;
  const sig = crypto.createHmac('sha256', SECRET).update(`recording:${callId}:${expires}`).digest('base64url');
  return `${PUBLIC_URL}/recordings/${callId}.wav?expires=${expires}&signature=${sig}`;
}

const iso = (d: unknown) => (d == null ? null : (d as Date).toISOString());

/** The page's rows' retry reasons by call id (the service's retry-reasons.ts). */
async function retryReasons(rows: Row[]): Promise<Map<unknown, string | null>> {
  const waiting = rows
    .filter((r) => waitsForRetry({ status: r.status as string, nextAttemptAt: r.next_attempt_at as Date | null }))
    .map((r) => r.call_id);
  if (!waiting.length) return new Map();
  const { rows: found } = await pool.query(LAST_RETRY_SQL, [waiting, ACCOUNT]);
  return new Map(found.map((f) => [f.call_id, retryReason(f.detail)]));
}

function callRecord(r: Row, reasons: Map<unknown, string | null>) {
  const outcomes = r.outcomes;
  return {
    call_id: r.call_id,
    batch_id: r.batch_id,
    contact_id: r.external_id,
    external_id: r.external_id,
    phone_number: r.phone_number,
    agent_id: r.agent_id,
    agent_name: r.agent_name,
    version_id: r.version_id,
    version_name: r.version_name,
    voice: r.voice,
    status: r.status,
    call_status: r.status,
    transcript_status: r.transcript_status,
    duration_seconds: r.duration_seconds,
    answer_duration_seconds: r.answer_duration_seconds,
    timestamp: iso(r.timestamp),
    created_at: iso(r.created_at),
    completed_at: iso(r.completed_at),
    hangup_by: r.hangup_by,
    disconnect_reason: r.disconnect_reason,
    summary: r.summary,
    outcomes: outcomes != null && typeof outcomes === 'object' && !Array.isArray(outcomes) ? outcomes : null,
    recording_available: r.recording_available,
    recording_url: r.recording_available ? recordingUrl(r.call_id as string) : null,
    llm_transcript: r.llm_transcript,
    attempts: r.attempts,
    next_attempt_at: iso(r.next_attempt_at),
    timezone: r.timezone,
    retry_reason: reasons.get(r.call_id) ?? null,
    primary_phone_number: r.primary_phone_number,
    consent:
      r.consent_source == null || r.consent_at == null
        ? null
        : { source: r.consent_source, timestamp: iso(r.consent_at), text: r.consent_text, reference: r.consent_reference },
    voicemail_left: r.voicemail_left,
  };
}

async function callRecords(rows: Row[]) {
  const reasons = await retryReasons(rows);
  return rows.map((r) => callRecord(r, reasons));
}

const pagination = (page: number, limit: number, total: number) => ({ page, limit, total, has_more: (page - 1) * limit + limit < total });

function send(res: http.ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const envelope = (message: string, data: unknown) => ({ status_code: 200, message, error: null, data });

async function answer(url: URL, res: http.ServerResponse): Promise<void> {
  const q = url.searchParams;
  const page = Number(q.get('page') ?? 1);
  const parts = url.pathname.slice(BASE.length + 1).split('/');
  if (parts[0] === 'call-batches' && parts.length === 3 && (parts[2] === 'calls' || parts[2] === 'results')) {
    const limit = Number(q.get('limit') ?? 100);
    const { rows } = await pool.query(BATCH_CALLS_SQL, [parts[1], ACCOUNT, limit, (page - 1) * limit]);
    if (!rows.length) return send(res, 404, { detail: 'Call batch not found' });
    const items = rows[0].call_id == null ? [] : await callRecords(rows);
    const pages = pagination(page, limit, rows[0].total);
    if (parts[2] === 'calls') return send(res, 200, envelope('Batch calls fetched successfully', { items, pagination: pages }));
    const b = rows[0];
    const status = b.batch_status === 'cancelled' ? 'cancelled' : b.b_queued + b.b_in_progress > 0 ? 'pending' : 'completed';
    return send(res, 200, envelope('Batch results fetched successfully', { status, items, pagination: pages }));
  }
  if (parts[0] === 'call-records' && parts.length === 1) {
    const limit = Number(q.get('page_size') ?? 50);
    const start = new Date(`${q.get('start_date')}T00:00:00.000Z`);
    const end = new Date(new Date(`${q.get('end_date')}T00:00:00.000Z`).getTime() + 86_400_000 - 1);
    const { rows } = await pool.query(RECORDS_SQL, [ACCOUNT, start, end, limit, (page - 1) * limit]);
    const items = rows[0].call_id == null ? [] : await callRecords(rows);
    return send(res, 200, envelope('Call records fetched successfully', { items, pagination: pagination(page, limit, rows[0].total) }));
  }
  if (parts[0] === 'call-batches' && parts.length === 1) {
    const limit = Number(q.get('limit') ?? 50);
    const { rows } = await pool.query(BATCHES_SQL, [ACCOUNT, limit, (page - 1) * limit]);
    const items =
      rows[0].batch_id == null
        ? []
        : rows.map((b) => ({
            batch_id: b.batch_id,
            agent_id: b.agent_id,
            version_id: b.version_id,
            status: b.status,
            total_contacts: b.total_contacts,
            queued: b.queued,
            in_progress: b.in_progress,
            completed: b.completed,
            failed: b.failed,
            cancelled: b.cancelled,
            created_at: iso(b.created_at),
          }));
    return send(res, 200, envelope('Call batches fetched successfully', { items, pagination: pagination(page, limit, rows[0].total) }));
  }
  send(res, 404, { detail: 'Not Found' });
}

const server = http.createServer((req, res) => {
  answer(new URL(req.url ?? '/', 'http://bare'), res).catch((e: unknown) => send(res, 500, { detail: String(e) }));
});
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => {
  server.close();
  void pool.end().finally(() => process.exit(0));
});
