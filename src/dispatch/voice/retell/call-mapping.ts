// Our PlaceCallRequest -> Retell create-phone-call body, and Retell's call object -> our end result
// and analysis. Pure functions: the provider and the tests share them. The field mapping is
// documented in docs/providers.md.

import type { CallEndResult, CallRecording, PlaceCallRequest, ProviderAnalysis } from '../provider.ts';
import { mapDisconnection } from './disconnection-map.ts';
import type { VoicemailSetting } from '../../../domain/voicemail.ts';

export interface RetellAgentRef {
  agentId: string | null;
  agentVersion: number | null;
}

/** The subset of Retell's V2PhoneCallResponse this service reads. */
export interface RetellCallObject {
  call_id: string;
  call_status: string;
  metadata?: Record<string, unknown> | null;
  start_timestamp?: number | null;
  end_timestamp?: number | null;
  duration_ms?: number | null;
  transcript?: string | null;
  recording_url?: string | null;
  disconnection_reason?: string | null;
  call_analysis?: { call_summary?: string | null; custom_analysis_data?: Record<string, unknown> | null; in_voicemail?: boolean | null } | null;
}

/** Retell records calls as WAV (recording_url ends in .wav in its docs). */
const RETELL_RECORDING_CONTENT_TYPE = 'audio/wav';

/** Dynamic variables must be strings for Retell: objects become JSON, null/undefined are dropped. */
function dynamicVariables(metadata: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(metadata)) {
    if (v === null || v === undefined) continue;
    out[k] = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
  }
  return out;
}

// Retell voice ids name their speech engine: retell-Cimo, 11labs-Adrian, openai-Alloy, cartesia-….
// Our catalogue's voice names (alloy, verse, …) are not Retell voices and would be refused.
const RETELL_VOICE_ID = /^[a-z0-9]+-[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * The voice_id override for a batch voice, or null to keep the Retell agent's own voice: only a
 * value shaped like a Retell voice id is sent.
 */
function retellVoiceOverride(voice: string): string | null {
  return RETELL_VOICE_ID.test(voice) ? voice : null;
}

// AgentRequest.max_call_duration_ms: "minimum 60,000 ms, maximum 7,200,000". Shorter limits are
// enforced by the worker, which stops the call at our max duration.
const MIN_MAX_CALL_MS = 60_000;
const MAX_MAX_CALL_MS = 7_200_000;

export function retellMaxCallMs(maxDurationSeconds: number): number {
  return Math.min(MAX_MAX_CALL_MS, Math.max(MIN_MAX_CALL_MS, Math.round(maxDurationSeconds * 1000)));
}

/** AgentRequest.voicemail_option's action: Retell detects voicemail and then hangs up or speaks this text. */
function retellVoicemailAction(setting: VoicemailSetting) {
  return setting.action === 'hangup' ? { type: 'hangup' as const } : { type: 'static_text' as const, text: setting.message };
}

/** Our ids as the call's metadata: every Retell event and list-calls lookup finds its call (and attempt) by them. */
function callMetadata(req: Pick<PlaceCallRequest, 'callId' | 'batchId' | 'accountId' | 'attempt'>) {
  return { call_id: req.callId, batch_id: req.batchId, account_id: req.accountId, attempt: req.attempt };
}

export function createPhoneCallBody(req: PlaceCallRequest, agent: RetellAgentRef) {
  const voiceId = retellVoiceOverride(req.agent.voice);
  return {
    from_number: req.from,
    to_number: req.to,
    ...(agent.agentId ? { override_agent_id: agent.agentId } : {}),
    ...(agent.agentVersion != null ? { override_agent_version: agent.agentVersion } : {}),
    // voice_id / max_call_duration_ms are AgentRequest fields, accepted per call in agent_override.
    agent_override: {
      agent: {
        ...(voiceId ? { voice_id: voiceId } : {}),
        max_call_duration_ms: retellMaxCallMs(req.maxDurationSeconds),
        ...(req.voicemail ? { voicemail_option: { action: retellVoicemailAction(req.voicemail) } } : {}),
      },
    },
    metadata: callMetadata(req),
    retell_llm_dynamic_variables: dynamicVariables({ ...req.contact.metadata, ...(req.contact.name ? { contact_name: req.contact.name } : {}) }),
  };
}

/** Does this Retell call belong to this dial (call id and attempt) of ours? */
export function isDialOf(c: RetellCallObject, callId: string, attempt: number): boolean {
  const m = (c.metadata ?? {}) as { call_id?: unknown; attempt?: unknown };
  // Metadata values may come back as strings (list-calls matches them "as strings").
  return m.call_id === callId && String(m.attempt ?? 1) === String(attempt);
}

export function isFinalCall(c: RetellCallObject): boolean {
  return c.call_status === 'ended' || c.call_status === 'error' || c.call_status === 'not_connected';
}

/** Retell's start_timestamp is set once the call connected; a not_connected call never did. */
function connected(c: RetellCallObject): boolean {
  return c.call_status !== 'not_connected' && c.start_timestamp != null;
}

function disconnection(c: RetellCallObject) {
  const reason = c.disconnection_reason ?? (c.call_status === 'error' ? 'error_unknown' : null);
  // After leaving a voicemail message the agent hangs up itself: the analysis still says the call
  // was in voicemail, so nobody was reached.
  if (c.call_analysis?.in_voicemail === true && reason !== 'voicemail_reached')
    return { ...mapDisconnection('voicemail_reached'), detail: { provider_reason: reason ?? 'unknown' } };
  return mapDisconnection(reason);
}

function answeredWith(c: RetellCallObject, status: CallEndResult['status']): boolean {
  return connected(c) && status !== 'no_answer' && status !== 'busy';
}

/** A final call that was answered: the only kind with a conversation (and an analysis) of ours. */
export function isAnsweredCall(c: RetellCallObject): boolean {
  return answeredWith(c, disconnection(c).status);
}

/**
 * A finished Retell call as our end result. Times come from Retell's own timestamps only (never
 * mixed with our clock): start_timestamp is the answer, so duration and answer duration agree for
 * answered calls; a call Retell gives no timestamps for lasted 0 s and ended `now`.
 */
export function endResultFromCall(c: RetellCallObject, opts: { recordingEnabled: boolean; now: Date }): CallEndResult {
  const { status, hangupBy, disconnectReason, detail } = disconnection(c);
  const endedAt = c.end_timestamp != null ? new Date(c.end_timestamp) : opts.now;
  const startedAt =
    c.start_timestamp != null
      ? new Date(Math.min(c.start_timestamp, endedAt.getTime()))
      : c.duration_ms != null
        ? new Date(endedAt.getTime() - Math.max(0, c.duration_ms))
        : endedAt;
  const answered = answeredWith(c, status);
  return {
    status,
    hangupBy,
    disconnectReason,
    startedAt,
    answeredAt: answered ? startedAt : null,
    endedAt,
    transcript: answered ? (c.transcript ?? '') : null,
    recording: answered && opts.recordingEnabled ? recordingOf(c) : null,
    ...(detail ? { detail } : {}),
  };
}

/** What analysing an ended call needs of Retell's call object (kept instead of the whole object). */
export type RetellAnalysisSource = Pick<RetellCallObject, 'call_analysis' | 'recording_url'>;

export function recordingOf(c: RetellAnalysisSource): CallRecording | null {
  return c.recording_url ? { contentType: RETELL_RECORDING_CONTENT_TYPE, sourceUrl: c.recording_url } : null;
}

/** Outcome values are strings in our API: Retell's booleans and numbers as text, objects as JSON. */
function outcomeValue(v: unknown): string {
  return typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
}

export function hasAnalysis(c: RetellAnalysisSource): boolean {
  const a = c.call_analysis;
  return !!a && (typeof a.call_summary === 'string' || (!!a.custom_analysis_data && typeof a.custom_analysis_data === 'object'));
}

/**
 * Retell's call_analysis as our analysis: call_summary -> summary, custom_analysis_data -> outcomes,
 * keeping only our agent's outcome keys (exact names) that Retell filled; null when it has none.
 */
export function analysisFromCall(c: RetellAnalysisSource, outcomeKeys: string[]): ProviderAnalysis | null {
  if (!hasAnalysis(c)) return null;
  const a = c.call_analysis!;
  const data = (a.custom_analysis_data ?? {}) as Record<string, unknown>;
  const outcomes: Record<string, string> = {};
  for (const key of outcomeKeys) {
    if (Object.hasOwn(data, key) && data[key] !== null && data[key] !== undefined) outcomes[key] = outcomeValue(data[key]);
  }
  const summary = typeof a.call_summary === 'string' && a.call_summary.trim() ? a.call_summary : null;
  return { summary, outcomes };
}
