// Our PlaceCallRequest -> Retell create-phone-call body, and Retell's call object -> CallEndResult.
// Pure functions: the provider and the tests share them.

import type { CallEndResult, PlaceCallRequest } from '../provider.ts';
import { mapDisconnection } from './disconnection-map.ts';

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
  transcript?: string | null;
  recording_url?: string | null;
  disconnection_reason?: string | null;
  call_analysis?: { call_summary?: string; custom_analysis_data?: Record<string, unknown> } | null;
}

/** Dynamic variables must be strings for Retell: objects become JSON, null/undefined are dropped. */
export function dynamicVariables(metadata: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(metadata)) {
    if (v === null || v === undefined) continue;
    out[k] = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
  }
  return out;
}

export function createPhoneCallBody(req: PlaceCallRequest, agent: RetellAgentRef) {
  return {
    from_number: req.from,
    to_number: req.to,
    ...(agent.agentId ? { override_agent_id: agent.agentId } : {}),
    ...(agent.agentVersion != null ? { override_agent_version: agent.agentVersion } : {}),
    // voice_id / max_call_duration_ms are AgentRequest fields, accepted per call in agent_override.
    agent_override: { agent: { voice_id: req.agent.voice, max_call_duration_ms: req.maxDurationSeconds * 1000 } },
    metadata: { call_id: req.callId, batch_id: req.batchId, account_id: req.accountId, attempt: req.attempt },
    retell_llm_dynamic_variables: dynamicVariables({ ...req.contact.metadata, ...(req.contact.name ? { contact_name: req.contact.name } : {}) }),
  };
}

export function isFinalCall(c: RetellCallObject): boolean {
  return c.call_status === 'ended' || c.call_status === 'error' || c.call_status === 'not_connected';
}

/** A finished Retell call as our end result; `fallbackStart` when Retell never started it. */
export function endResultFromCall(c: RetellCallObject, fallbackStart: Date, now: Date): CallEndResult {
  const { status, hangupBy, disconnectReason } = mapDisconnection(c.disconnection_reason ?? (c.call_status === 'error' ? 'error_unknown' : null));
  const startedAt = c.start_timestamp ? new Date(c.start_timestamp) : fallbackStart;
  const endedAt = c.end_timestamp ? new Date(c.end_timestamp) : now;
  const answered = status === 'completed' && !!c.start_timestamp;
  return {
    status,
    hangupBy,
    disconnectReason,
    startedAt,
    answeredAt: answered ? startedAt : null,
    endedAt: endedAt < startedAt ? startedAt : endedAt,
    transcript: answered ? (c.transcript ?? '') : null,
    recording: null,
  };
}
