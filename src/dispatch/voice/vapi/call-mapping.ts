// Our PlaceCallRequest -> Vapi's POST /call body, and Vapi's call object -> our end result and
// analysis. Pure functions: the provider and the tests share them. The field mapping is
// documented in docs/providers.md ("Vapi").
import type { CallEndResult, CallRecording, PlaceCallRequest, ProviderAnalysis } from '../provider.ts';
import { failedInProgress, mapEndedReason } from './ended-reason-map.ts';
import type { VoicemailSetting } from '../../../domain/voicemail.ts';

/** Which Vapi assistant and phone number place a call. */
export interface VapiDialRef {
  assistantId: string;
  phoneNumberId: string;
}

/** The subset of Vapi's Call object this service reads (and keeps, in stored events). */
export interface VapiCallObject {
  id: string;
  status: string;
  createdAt?: string | null;
  startedAt?: string | null;
  endedAt?: string | null;
  endedReason?: string | null;
  phoneNumberId?: string | null;
  assistantOverrides?: { metadata?: Record<string, unknown> | null } | null;
  artifact?: {
    transcript?: string | null;
    recordingUrl?: string | null;
    recording?: { mono?: { combinedUrl?: string | null } | null } | null;
  } | null;
  analysis?: { summary?: string | null; structuredData?: Record<string, unknown> | null } | null;
  monitor?: { controlUrl?: string | null } | null;
}

/** Vapi's mono recordings are WAV files. */
const VAPI_RECORDING_CONTENT_TYPE = 'audio/wav';

// AssistantOverrides.maxDurationSeconds: "minimum 10, maximum 43200". Shorter limits are
// enforced by the worker, which ends the call at our max duration.
const MIN_MAX_DURATION_S = 10;
const MAX_MAX_DURATION_S = 43_200;

export function vapiMaxDurationSeconds(maxDurationSeconds: number): number {
  return Math.min(MAX_MAX_DURATION_S, Math.max(MIN_MAX_DURATION_S, Math.round(maxDurationSeconds)));
}

/** Template variables (LiquidJS in Vapi's prompts): objects as JSON, null/undefined dropped. */
function variableValues(metadata: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(metadata)) {
    if (v === null || v === undefined) continue;
    out[k] = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
  }
  return out;
}

/** Our ids as the assistant's metadata for this call: every event and lookup finds its call (and attempt) by them. */
export function callMetadata(req: Pick<PlaceCallRequest, 'callId' | 'batchId' | 'accountId' | 'attempt'>) {
  return { call_id: req.callId, batch_id: req.batchId, account_id: req.accountId, attempt: req.attempt };
}

export function createCallBody(req: PlaceCallRequest, ref: VapiDialRef) {
  return {
    assistantId: ref.assistantId,
    phoneNumberId: ref.phoneNumberId,
    customer: { number: req.to },
    assistantOverrides: {
      metadata: callMetadata(req),
      variableValues: variableValues({ ...req.contact.metadata, ...(req.contact.name ? { contact_name: req.contact.name } : {}) }),
      maxDurationSeconds: vapiMaxDurationSeconds(req.maxDurationSeconds),
      ...(req.voicemail ? vapiVoicemailOverrides(req.voicemail) : {}),
    },
  };
}

// Vapi detects voicemail only when asked (its detection is off by default) and then speaks
// voicemailMessage, or hangs up without one.
function vapiVoicemailOverrides(setting: VoicemailSetting) {
  return {
    voicemailDetection: { provider: 'vapi' as const },
    ...(setting.action === 'leave_message' ? { voicemailMessage: setting.message } : {}),
  };
}

/** Our ids on a Vapi call (its assistantOverrides.metadata), as far as they are there. */
export function ourIds(c: Pick<VapiCallObject, 'assistantOverrides'>): { callId: string | null; accountId: string | null; attempt: string } {
  const m = (c.assistantOverrides?.metadata ?? {}) as { call_id?: unknown; account_id?: unknown; attempt?: unknown };
  return {
    callId: typeof m.call_id === 'string' ? m.call_id : null,
    accountId: typeof m.account_id === 'string' ? m.account_id : null,
    attempt: String(m.attempt ?? 1),
  };
}

/** Does this Vapi call belong to this dial (call id and attempt) of ours? */
export function isDialOf(c: VapiCallObject, callId: string, attempt: number): boolean {
  const ids = ourIds(c);
  return ids.callId === callId && ids.attempt === String(attempt);
}

export function isFinalCall(c: Pick<VapiCallObject, 'status'>): boolean {
  return c.status === 'ended';
}

function transcriptOf(c: VapiCallObject): string | null {
  const t = c.artifact?.transcript;
  return typeof t === 'string' ? t : null;
}

function outcomeOf(c: VapiCallObject) {
  return mapEndedReason(c.endedReason, !!transcriptOf(c)?.trim());
}

function answeredWith(c: VapiCallObject, status: CallEndResult['status']): boolean {
  return status === 'completed' || (status === 'failed' && failedInProgress(c.endedReason ?? ''));
}

/** A final call that was answered: the only kind with a conversation (and an analysis) of ours. */
export function isAnsweredCall(c: VapiCallObject): boolean {
  return isFinalCall(c) && answeredWith(c, outcomeOf(c).status);
}

const time = (iso: string | null | undefined): number | null => {
  const t = iso ? Date.parse(iso) : NaN;
  return Number.isNaN(t) ? null : t;
};

/**
 * An ended Vapi call as our end result. Times come from Vapi's own startedAt/endedAt only (never
 * mixed with our clock): startedAt is taken as the answer of an answered call, so duration and
 * answer duration agree; a call without them lasted 0 s and ended `now`.
 */
export function endResultFromCall(c: VapiCallObject, opts: { recordingEnabled: boolean; now: Date }): CallEndResult {
  const { status, hangupBy, disconnectReason, detail } = outcomeOf(c);
  const end = time(c.endedAt);
  const endedAt = end !== null ? new Date(end) : opts.now;
  const start = time(c.startedAt);
  const startedAt = start !== null ? new Date(Math.min(start, endedAt.getTime())) : endedAt;
  const answered = answeredWith(c, status);
  return {
    status,
    hangupBy,
    disconnectReason,
    startedAt,
    answeredAt: answered ? startedAt : null,
    endedAt,
    transcript: answered ? (transcriptOf(c) ?? '') : null,
    recording: answered && opts.recordingEnabled ? recordingOf(c) : null,
    ...(detail ? { detail } : {}),
  };
}

/** What analysing an ended call needs of Vapi's call object (kept instead of the whole object). */
export type VapiAnalysisSource = Pick<VapiCallObject, 'analysis' | 'artifact'>;

export function recordingOf(c: VapiAnalysisSource): CallRecording | null {
  const url = c.artifact?.recordingUrl ?? c.artifact?.recording?.mono?.combinedUrl ?? null;
  return url ? { contentType: VAPI_RECORDING_CONTENT_TYPE, sourceUrl: url } : null;
}

export function hasAnalysis(c: VapiAnalysisSource): boolean {
  const a = c.analysis;
  return !!a && (typeof a.summary === 'string' || (!!a.structuredData && typeof a.structuredData === 'object'));
}

/** Outcome values are strings in our API: booleans and numbers as text, objects as JSON. */
function outcomeValue(v: unknown): string {
  return typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/**
 * Vapi's analysis as ours: summary -> summary, structuredData -> outcomes, keeping only our
 * agent's outcome keys (exact names) that Vapi filled; null when it has none.
 */
export function analysisFromCall(c: VapiAnalysisSource, outcomeKeys: string[]): ProviderAnalysis | null {
  if (!hasAnalysis(c)) return null;
  const a = c.analysis!;
  const data = (a.structuredData && typeof a.structuredData === 'object' ? a.structuredData : {}) as Record<string, unknown>;
  const outcomes: Record<string, string> = {};
  for (const key of outcomeKeys) {
    if (Object.hasOwn(data, key) && data[key] !== null && data[key] !== undefined) outcomes[key] = outcomeValue(data[key]);
  }
  const summary = typeof a.summary === 'string' && a.summary.trim() ? a.summary : null;
  return { summary, outcomes };
}

type JsonObject = Record<string, unknown>;
const asObject = (v: unknown): JsonObject | null => (v && typeof v === 'object' && !Array.isArray(v) ? (v as JsonObject) : null);
const asString = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** The fields of a Vapi call object this service keeps (stored events hold these, not Vapi's whole call). */
export function compactCall(c: JsonObject): VapiCallObject {
  const artifact = asObject(c.artifact);
  const analysis = asObject(c.analysis);
  const meta = asObject(asObject(c.assistantOverrides)?.metadata);
  return {
    id: String(c.id),
    status: String(c.status ?? ''),
    createdAt: asString(c.createdAt),
    startedAt: asString(c.startedAt),
    endedAt: asString(c.endedAt),
    endedReason: asString(c.endedReason),
    phoneNumberId: asString(c.phoneNumberId),
    assistantOverrides: {
      metadata: meta ? { call_id: meta.call_id, batch_id: meta.batch_id, account_id: meta.account_id, attempt: meta.attempt } : null,
    },
    artifact: artifact
      ? {
          transcript: asString(artifact.transcript),
          recordingUrl: asString(artifact.recordingUrl),
          recording: { mono: { combinedUrl: asString(asObject(asObject(artifact.recording)?.mono)?.combinedUrl) } },
        }
      : null,
    analysis: analysis ? { summary: asString(analysis.summary), structuredData: asObject(analysis.structuredData) } : null,
    monitor: { controlUrl: asString(asObject(c.monitor)?.controlUrl) },
  };
}
