// The outbox: a state change and the webhook it causes commit together, so a crash can neither
// lose an event nor announce a change that rolled back. The delivery worker sends what is here.
//
// Rows are inserted with the batch's CURRENT callback_url, read inside the caller's transaction:
// a batch without one (or whose endpoint answered 410 Gone, which clears it) queues nothing.
import type { AppDeps } from '../../deps.ts';
import { newId } from '../../domain/ids.ts';
import { recordingUrlOf } from '../recording-url.ts';
import { retryReason } from '../../domain/call-attempts.ts';
import { batchDetails, callRecord, numberDialled, type BatchDetailsSource, type CallRecordSource } from '../representations.ts';
import type { BatchEventType, CallEventType, WebhookEvent, WebhookEventType } from './events.ts';
import { runSql, type WebhookTx } from './tx.ts';
import { optionSelectList } from '../../db/batch-option-columns.ts';

export type { WebhookTx } from './tx.ts';

export interface EnqueueInput {
  accountId: string;
  batchId: string;
  /** The batch's callback_url as the caller knows it; null/undefined skips without a query. */
  callbackUrl: string | null | undefined;
  type: WebhookEventType;
  data: Record<string, unknown>;
  /** When the change happened (the event's created_at; first attempt due then). */
  at: Date;
}

interface Row {
  id: string;
  accountId: string;
  batchId: string;
  type: string;
  payload: WebhookEvent;
}

const INSERT_SQL = `
INSERT INTO webhook_deliveries (id, account_id, batch_id, event_type, payload, url, status, attempts, next_attempt_at, created_at)
SELECT e.id, b.account_id, b.id, e.type, e.payload, b.callback_url, 'pending', 0, $2::timestamptz, $2::timestamptz
  FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS x(j, ord)
  CROSS JOIN LATERAL (SELECT x.j->>'id' AS id, x.j->>'accountId' AS account_id, x.j->>'batchId' AS batch_id,
                             x.j->>'type' AS type, x.j->'payload' AS payload) e
  JOIN batches b ON b.id = e.batch_id AND b.account_id = e.account_id
 WHERE b.callback_url IS NOT NULL
 ORDER BY x.ord
RETURNING id`;

async function insertRows(tx: WebhookTx, rows: Row[], at: Date): Promise<string[]> {
  if (rows.length === 0) return [];
  const inserted = await runSql(tx)<{ id: string }>(INSERT_SQL, [JSON.stringify(rows), at.toISOString()]);
  const ids = new Set(inserted.map((r) => r.id));
  return rows.filter((r) => ids.has(r.id)).map((r) => r.id);
}

function row(accountId: string, batchId: string, type: string, data: Record<string, unknown>, at: Date): Row {
  // uuidv7 ids are monotonic, so id order is enqueue order (events of one transaction included).
  const id = newId('webhook');
  return { id, accountId, batchId, type, payload: { id, type, created_at: at.toISOString(), data } };
}

/** Queues one event inside `tx`; returns its id (= webhook-id), or null when the batch has no callback_url. */
export async function enqueueWebhook(tx: WebhookTx, input: EnqueueInput): Promise<string | null> {
  if (!input.callbackUrl) return null;
  const [id] = await insertRows(tx, [row(input.accountId, input.batchId, input.type, input.data, input.at)], input.at);
  return id ?? null;
}

const BATCH_SQL = `
SELECT id, account_id AS "accountId", agent_id AS "agentId", prompt_version_id AS "versionId", status,
       start_mode AS "startMode", scheduled_at AS "scheduledAt", timezone, concurrency,
       total_contacts AS "totalContacts", accepted_contacts AS "acceptedContacts", rejected_contacts AS "rejectedContacts",
       callbacks, queued, in_progress AS "inProgress", completed, failed, cancelled,
       created_at AS "createdAt", started_at AS "startedAt", completed_at AS "completedAt",
       CASE WHEN retry_max_attempts IS NULL THEN NULL
            ELSE jsonb_build_object('maxAttempts', retry_max_attempts, 'on', to_jsonb(retry_on), 'delaySeconds', retry_delay_seconds) END AS retry,
       expires_at AS "expiresAt", calling_window AS "callingWindow", enforced_window AS "enforcedCallingWindow"
       ${optionSelectList('batches')}
  FROM batches
 WHERE id = ANY(SELECT jsonb_array_elements_text($1::jsonb)) AND callback_url IS NOT NULL`;

/**
 * Queues batch events (data: the batch details as they are at this point of the transaction, so
 * call the helper AFTER the status/counter update). Batches without a callback_url cost one
 * indexed read and queue nothing.
 */
export async function enqueueBatchWebhooks(tx: WebhookTx, events: { type: BatchEventType; batchId: string }[], at: Date): Promise<string[]> {
  if (events.length === 0) return [];
  const ids = [...new Set(events.map((e) => e.batchId))];
  const batches = await runSql(tx)<BatchDetailsSource & { accountId: string }>(BATCH_SQL, [JSON.stringify(ids)]);
  const byId = new Map(batches.map((b) => [b.id, b]));
  const rows = events.flatMap((e) => {
    const b = byId.get(e.batchId);
    return b ? [row(b.accountId, b.id, e.type, { ...batchDetails(b) }, at)] : [];
  });
  return insertRows(tx, rows, at);
}

const CALL_SQL = `
SELECT c.id, c.batch_id AS "batchId", c.external_id AS "externalId", c.phone_number AS "phoneNumber",
       c.dialed_number AS "dialedNumber", c.agent_id AS "agentId", c.prompt_version_id AS "versionId",
       c.status, c.transcript_status AS "transcriptStatus", c.duration_seconds AS "durationSeconds",
       c.answer_duration_seconds AS "answerDurationSeconds", c."timestamp", c.created_at AS "createdAt",
       c.completed_at AS "completedAt", c.hangup_by AS "hangupBy", c.disconnect_reason AS "disconnectReason",
       c.summary, c.outcomes, c.recording_available AS "recordingAvailable", c.llm_transcript AS "llmTranscript",
       c.account_id AS "accountId", a.name AS "agentName", v.name AS "versionName", b.voice,
       c.attempts, c.next_attempt_at AS "nextAttemptAt", c.timezone, c.phone_number AS "primaryPhoneNumber",
       CASE WHEN c.consent_source IS NOT NULL THEN
         jsonb_build_object('source', c.consent_source, 'timestamp', c.consent_at, 'text', c.consent_text, 'reference', c.consent_reference) END AS consent,
       c.voicemail_left AS "voicemailLeft", c.from_number AS "fromNumber",
       -- Why a call waiting for a retry waits (retry-reasons.ts): its last retry entry, read only for such a call.
       CASE WHEN c.status = 'queued' AND c.next_attempt_at IS NOT NULL THEN
         (SELECT e.detail FROM call_events e WHERE e.call_id = c.id AND e.account_id = c.account_id AND e.detail->>'event' = 'retry_scheduled'
           ORDER BY e.id DESC LIMIT 1) END AS "retryDetail"
  FROM calls c
  JOIN batches b ON b.id = c.batch_id
  JOIN agents a ON a.id = c.agent_id
  JOIN prompt_versions v ON v.id = c.prompt_version_id
 WHERE c.id = ANY(SELECT jsonb_array_elements_text($1::jsonb)) AND b.callback_url IS NOT NULL`;

type CallRow = Omit<CallRecordSource, 'recordingUrl' | 'retryReason'> & { accountId: string; dialedNumber: string | null; retryDetail: unknown };

/** `call.failed` also says why, in the call status' own words. */
export function callEventData(type: CallEventType, record: ReturnType<typeof callRecord>): Record<string, unknown> {
  return type === 'call.failed' ? { ...record, reason: record.status } : { ...record };
}

/**
 * Queues call events with the full call record as it is at this point of the transaction (call it
 * after the call's own update). One read and one insert whatever the number of events.
 */
export async function enqueueCallWebhooks(
  tx: WebhookTx,
  deps: Pick<AppDeps, 'config' | 'appSecret' | 'clock'>,
  events: { type: CallEventType; callId: string }[],
  at: Date,
): Promise<string[]> {
  if (events.length === 0) return [];
  const ids = [...new Set(events.map((e) => e.callId))];
  const calls = await runSql(tx)<CallRow>(CALL_SQL, [JSON.stringify(ids)]);
  const byId = new Map(calls.map((c) => [c.id, c]));
  const rows = events.flatMap((e) => {
    const c = byId.get(e.callId);
    if (!c) return [];
    const { retryDetail, ...fields } = c;
    const record = callRecord({
      ...fields,
      phoneNumber: numberDialled(c),
      recordingUrl: recordingUrlOf(deps, c),
      retryReason: retryDetail == null ? null : retryReason(retryDetail),
    });
    return [row(c.accountId, c.batchId, e.type, callEventData(e.type, record), at)];
  });
  return insertRows(tx, rows, at);
}
