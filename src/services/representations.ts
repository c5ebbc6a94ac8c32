// The contract's snake_case shapes of a call record and of batch details, each mapped in ONE
// place: the REST routes (from their typed GraphQL results) and the webhook payloads (from the
// outbox's rows) both call these, so a client that parses one parses the other.
import { isoUtc as iso } from '../domain/text-forms.ts';
import { BATCH_OPTION_REST_NAMES, batchOptionsOut, type BatchOptions, type BatchOptionsOut } from '../domain/batch-options.ts';

export interface CallRecord {
  call_id: string;
  batch_id: string;
  contact_id: string;
  external_id: string;
  phone_number: string;
  agent_id: string;
  agent_name: string;
  version_id: string;
  version_name: string;
  voice: string;
  status: string;
  call_status: string;
  transcript_status: string | null;
  duration_seconds: number | null;
  answer_duration_seconds: number | null;
  timestamp: string | null;
  created_at: string;
  completed_at: string | null;
  hangup_by: string | null;
  disconnect_reason: string | null;
  summary: string | null;
  outcomes: Record<string, string> | null;
  recording_available: boolean | null;
  recording_url: string | null;
  llm_transcript: string | null;
  /** Dials made so far, the alternate number's included. */
  attempts: number;
  /** When a waiting call is next tried (a retry, its calling window opening, or the frequency cap letting it through); null otherwise. */
  next_attempt_at: string | null;
  /** The zones its calling window is judged in (comma-separated); null without a window. */
  timezone: string | null;
  /** Why a call waiting for a retry waits: how its last attempt ended (no_answer, busy, failed, voicemail, voicemail_left); null unless it waits for one. */
  retry_reason: string | null;
  /** The contact's consent record as given at create (docs/campaigns.md "Consent records"); null without one. */
  consent: ConsentOut | null;
  /** The contact's primary number: `phone_number` is the number dialled, the alternate one when it was used. */
  primary_phone_number: string;
  /** Whether an attempt that reached voicemail left the batch's message (docs/campaigns.md "Voicemail"); null: voicemail not reached, or unknown. */
  voicemail_left: boolean | null;
  /** The caller-ID number its latest dial was placed from (docs/campaigns.md "Caller-ID pools and local presence"); null: never dialled. */
  from_number: string | null;
}

export interface ConsentOut {
  source: string;
  timestamp: string;
  text: string | null;
  reference: string | null;
}

export interface CallingWindowOut {
  start: string;
  end: string;
  days: string[];
  timezone: string;
}

export interface RetryOut {
  max_attempts: number;
  on: string[];
  delay_seconds: number;
}

/** Its options (domain/batch-options.ts) follow the contract's fields. */
export interface BatchDetails extends BatchOptionsOut {
  batch_id: string;
  agent_id: string;
  version_id: string;
  status: string;
  start_mode: string;
  scheduled_at: string;
  timezone: string;
  concurrency: number;
  total_contacts: number;
  accepted_contacts: number;
  rejected_contacts: number;
  callbacks: number;
  queued: number;
  in_progress: number;
  completed: number;
  failed: number;
  cancelled: number;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  retry: RetryOut | null;
  expires_at: string | null;
  calling_window: CallingWindowOut | null;
  /** The account's enforced window the batch is narrowed to: its calls are placed only while both are open. */
  enforced_calling_window: CallingWindowOut | null;
}

/** Field order of the contract's tables; serialisers that lose key order (jsonb) restore it with these. */
export const CALL_RECORD_FIELDS = [
  'call_id',
  'batch_id',
  'contact_id',
  'external_id',
  'phone_number',
  'agent_id',
  'agent_name',
  'version_id',
  'version_name',
  'voice',
  'status',
  'call_status',
  'transcript_status',
  'duration_seconds',
  'answer_duration_seconds',
  'timestamp',
  'created_at',
  'completed_at',
  'hangup_by',
  'disconnect_reason',
  'summary',
  'outcomes',
  'recording_available',
  'recording_url',
  'llm_transcript',
  'attempts',
  'next_attempt_at',
  'timezone',
  'retry_reason',
  'primary_phone_number',
  'consent',
  'voicemail_left',
  'from_number',
] as const satisfies readonly (keyof CallRecord)[];

export const BATCH_DETAILS_FIELDS = [
  'batch_id',
  'agent_id',
  'version_id',
  'status',
  'start_mode',
  'scheduled_at',
  'timezone',
  'concurrency',
  'total_contacts',
  'accepted_contacts',
  'rejected_contacts',
  'callbacks',
  'queued',
  'in_progress',
  'completed',
  'failed',
  'cancelled',
  'created_at',
  'started_at',
  'completed_at',
  'retry',
  'expires_at',
  'calling_window',
  'enforced_calling_window',
  ...BATCH_OPTION_REST_NAMES,
] as const satisfies readonly (keyof BatchDetails)[];

/**
 * A call record in the service's own (camelCase) names, the names of GraphQL's Call fields: the
 * REST routes pass their typed GraphQL result, the webhook outbox its row. Dates are Dates or ISO
 * strings.
 */
export interface CallRecordSource {
  id: string;
  batchId: string;
  externalId: string;
  /** The number dialled: the alternate one when it was used (numberDialled). */
  phoneNumber: string;
  agentId: string;
  agentName: string;
  versionId: string;
  versionName: string;
  /** The batch's voice. */
  voice: string;
  status: string;
  transcriptStatus: string | null;
  durationSeconds: number | null;
  answerDurationSeconds: number | null;
  timestamp: Date | string | null;
  createdAt: Date | string;
  completedAt: Date | string | null;
  hangupBy: string | null;
  disconnectReason: string | null;
  summary: string | null;
  outcomes: unknown;
  recordingAvailable: boolean | null;
  recordingUrl: string | null;
  llmTranscript: string | null;
  attempts: number;
  nextAttemptAt: Date | string | null;
  timezone: string | null;
  /** Null unless the call waits for a retry (services/calls/retry-reasons.ts). */
  retryReason: string | null;
  /** Absent where a source has no consent column to read (treated as none). */
  consent?: { source: string; timestamp: Date | string; text: string | null; reference: string | null } | null;
  /** The contact's primary number (`calls.phone_number`), whichever number was dialled. */
  primaryPhoneNumber: string;
  voicemailLeft: boolean | null;
  fromNumber: string | null;
}

/** The number a call record shows: the alternate one when it was dialled. */
export const numberDialled = (c: { phoneNumber: string; dialedNumber: string | null }): string => c.dialedNumber ?? c.phoneNumber;

// Stored as the analyser wrote it (string values); passed through unchanged, as GraphQL's JSON does.
function outcomesObject(v: unknown): Record<string, string> | null {
  if (v == null || typeof v !== 'object' || Array.isArray(v)) return null;
  return v as Record<string, string>;
}

/** The contract's Call record, field for field in the table's order. */
export function callRecord(c: CallRecordSource): CallRecord {
  return {
    call_id: c.id,
    batch_id: c.batchId,
    contact_id: c.externalId,
    external_id: c.externalId,
    phone_number: c.phoneNumber,
    agent_id: c.agentId,
    agent_name: c.agentName,
    version_id: c.versionId,
    version_name: c.versionName,
    voice: c.voice,
    status: c.status,
    call_status: c.status,
    transcript_status: c.transcriptStatus,
    duration_seconds: c.durationSeconds,
    answer_duration_seconds: c.answerDurationSeconds,
    timestamp: iso(c.timestamp),
    created_at: iso(c.createdAt)!,
    completed_at: iso(c.completedAt),
    hangup_by: c.hangupBy,
    disconnect_reason: c.disconnectReason,
    summary: c.summary,
    outcomes: outcomesObject(c.outcomes),
    recording_available: c.recordingAvailable,
    recording_url: c.recordingUrl,
    llm_transcript: c.llmTranscript,
    attempts: c.attempts,
    next_attempt_at: iso(c.nextAttemptAt),
    timezone: c.timezone,
    retry_reason: c.retryReason,
    primary_phone_number: c.primaryPhoneNumber,
    consent: c.consent
      ? { source: c.consent.source, timestamp: iso(c.consent.timestamp)!, text: c.consent.text, reference: c.consent.reference }
      : null,
    voicemail_left: c.voicemailLeft,
    from_number: c.fromNumber,
  };
}

/** Batch details in the names of GraphQL's CallBatch fields (REST's typed result, the outbox's row). */
export interface BatchDetailsSource extends BatchOptions {
  id: string;
  agentId: string;
  versionId: string;
  status: string;
  startMode: string;
  scheduledAt: Date | string;
  timezone: string;
  concurrency: number;
  totalContacts: number;
  acceptedContacts: number;
  rejectedContacts: number;
  callbacks: number;
  queued: number;
  inProgress: number;
  completed: number;
  failed: number;
  cancelled: number;
  createdAt: Date | string;
  startedAt?: Date | string | null;
  completedAt?: Date | string | null;
  retry: { maxAttempts: number; on: readonly string[]; delaySeconds: number } | null;
  expiresAt: Date | string | null;
  callingWindow: { start: string; end: string; days: readonly string[]; timezone: string } | null;
  enforcedCallingWindow: { start: string; end: string; days: readonly string[]; timezone: string } | null;
}

const windowOut = (w: BatchDetailsSource['callingWindow']): CallingWindowOut | null =>
  w ? { start: w.start, end: w.end, days: [...w.days], timezone: w.timezone } : null;

/** The contract's Batch details, field for field in the table's order. */
export function batchDetails(batch: BatchDetailsSource): BatchDetails {
  return {
    batch_id: batch.id,
    agent_id: batch.agentId,
    version_id: batch.versionId,
    status: batch.status,
    start_mode: batch.startMode,
    scheduled_at: iso(batch.scheduledAt)!,
    timezone: batch.timezone,
    concurrency: batch.concurrency,
    total_contacts: batch.totalContacts,
    accepted_contacts: batch.acceptedContacts,
    rejected_contacts: batch.rejectedContacts,
    callbacks: batch.callbacks,
    queued: batch.queued,
    in_progress: batch.inProgress,
    completed: batch.completed,
    failed: batch.failed,
    cancelled: batch.cancelled,
    created_at: iso(batch.createdAt)!,
    started_at: iso(batch.startedAt ?? null),
    completed_at: iso(batch.completedAt ?? null),
    retry: batch.retry ? { max_attempts: batch.retry.maxAttempts, on: [...batch.retry.on], delay_seconds: batch.retry.delaySeconds } : null,
    expires_at: iso(batch.expiresAt),
    calling_window: windowOut(batch.callingWindow),
    enforced_calling_window: windowOut(batch.enforcedCallingWindow),
    ...batchOptionsOut(batch),
  };
}
