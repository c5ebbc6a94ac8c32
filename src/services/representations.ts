// The contract's snake_case shapes of a call record and of batch details, in ONE place: webhook
// payloads are built here, and the REST read routes (which map GraphQL results) use the same field
// names, so a client that parses one parses the other.
import type { AppDeps } from '../deps.ts';
import type { Agent, Batch, Call, PromptVersion } from '../generated/prisma/client.ts';
import { recordingUrl } from './recording-url.ts';

/** ISO 8601 UTC with milliseconds and Z (DESIGN.md); same output as the GraphQL DateTime scalar. */
export function iso(d: Date | string | null | undefined): string | null {
  if (d == null) return null;
  return (d instanceof Date ? d : new Date(d)).toISOString();
}

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
}

export interface BatchDetails {
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
}

/** Field order of the contract's tables; serialisers that lose key order (jsonb) restore it with these. */
export const CALL_RECORD_FIELDS = [
  'call_id', 'batch_id', 'contact_id', 'external_id', 'phone_number', 'agent_id', 'agent_name', 'version_id',
  'version_name', 'voice', 'status', 'call_status', 'transcript_status', 'duration_seconds', 'answer_duration_seconds',
  'timestamp', 'created_at', 'completed_at', 'hangup_by', 'disconnect_reason', 'summary', 'outcomes',
  'recording_available', 'recording_url', 'llm_transcript',
] as const satisfies readonly (keyof CallRecord)[];

export const BATCH_DETAILS_FIELDS = [
  'batch_id', 'agent_id', 'version_id', 'status', 'start_mode', 'scheduled_at', 'timezone', 'concurrency',
  'total_contacts', 'accepted_contacts', 'rejected_contacts', 'callbacks', 'queued', 'in_progress', 'completed',
  'failed', 'cancelled', 'created_at', 'started_at', 'completed_at',
] as const satisfies readonly (keyof BatchDetails)[];

export type CallRecordCall = Pick<
  Call,
  | 'id'
  | 'batchId'
  | 'externalId'
  | 'phoneNumber'
  | 'dialedNumber'
  | 'agentId'
  | 'promptVersionId'
  | 'status'
  | 'transcriptStatus'
  | 'durationSeconds'
  | 'answerDurationSeconds'
  | 'timestamp'
  | 'createdAt'
  | 'completedAt'
  | 'hangupBy'
  | 'disconnectReason'
  | 'summary'
  | 'outcomes'
  | 'recordingAvailable'
  | 'llmTranscript'
>;

// Stored as the analyser wrote it (string values); passed through unchanged, as GraphQL's JSON does.
function outcomesObject(v: unknown): Record<string, string> | null {
  if (v == null || typeof v !== 'object' || Array.isArray(v)) return null;
  return v as Record<string, string>;
}

/**
 * One call as the contract's call record. `phone_number` is the number actually dialled (the
 * alternate one when it was used), as on the GraphQL Call type; `voice` is the batch's voice.
 */
export function callRecord(
  call: CallRecordCall,
  agent: Pick<Agent, 'id' | 'name'>,
  version: Pick<PromptVersion, 'id' | 'name'>,
  batch: Pick<Batch, 'voice'>,
  deps: Pick<AppDeps, 'config' | 'appSecret' | 'clock'>,
): CallRecord {
  return {
    call_id: call.id,
    batch_id: call.batchId,
    contact_id: call.externalId,
    external_id: call.externalId,
    phone_number: call.dialedNumber ?? call.phoneNumber,
    agent_id: agent.id,
    agent_name: agent.name,
    version_id: version.id,
    version_name: version.name,
    voice: batch.voice,
    status: call.status,
    call_status: call.status,
    transcript_status: call.transcriptStatus,
    duration_seconds: call.durationSeconds,
    answer_duration_seconds: call.answerDurationSeconds,
    timestamp: iso(call.timestamp),
    created_at: iso(call.createdAt)!,
    completed_at: iso(call.completedAt),
    hangup_by: call.hangupBy,
    disconnect_reason: call.disconnectReason,
    summary: call.summary,
    outcomes: outcomesObject(call.outcomes),
    recording_available: call.recordingAvailable,
    recording_url: call.recordingAvailable ? recordingUrl(deps, call.id) : null,
    llm_transcript: call.llmTranscript,
  };
}

export type BatchDetailsBatch = Pick<
  Batch,
  | 'id'
  | 'agentId'
  | 'promptVersionId'
  | 'status'
  | 'startMode'
  | 'scheduledAt'
  | 'timezone'
  | 'concurrency'
  | 'totalContacts'
  | 'acceptedContacts'
  | 'rejectedContacts'
  | 'callbacks'
  | 'queued'
  | 'inProgress'
  | 'completed'
  | 'failed'
  | 'cancelled'
  | 'createdAt'
  | 'startedAt'
  | 'completedAt'
>;

export function batchDetails(batch: BatchDetailsBatch): BatchDetails {
  return {
    batch_id: batch.id,
    agent_id: batch.agentId,
    version_id: batch.promptVersionId,
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
    started_at: iso(batch.startedAt),
    completed_at: iso(batch.completedAt),
  };
}
