// Use case: Vapi server-URL messages, stored on receipt (answer fast) and handed once to the worker
// that holds the call. Only what a call's result needs is kept: status-update (ringing,
// in-progress, ended) and end-of-call-report, each reduced to the call fields this service reads.
// provider_events.id = `vapi:<vapi call id>:<type>[:<status>]`, so a redelivered message is a
// no-op insert and is never handed out twice.
import type { AppDeps } from '../../../deps.ts';
import { compactCall, type VapiCallObject } from './call-mapping.ts';

export const VAPI_MESSAGES = ['status-update', 'end-of-call-report'] as const;
export type VapiMessageType = (typeof VAPI_MESSAGES)[number];

export interface VapiStoredEvent {
  type: VapiMessageType;
  /** The call's status this message reports ('ended' for an end-of-call-report). */
  status: string;
  /** The message's own timestamp (ms), when it carried a plausible one. */
  at: number | null;
  /** The call as the message shows it (an end-of-call-report's artifact, analysis and times merged in). */
  call: VapiCallObject;
}

const ORDER: Record<string, number> = { ringing: 0, 'in-progress': 1, forwarding: 2, ended: 3 };
const order = (e: VapiStoredEvent) => (e.type === 'end-of-call-report' ? 9 : (ORDER[e.status] ?? 5));

/** A plausible epoch-ms timestamp (years 2001-2286), else null. */
function epochMs(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) && v > 1e12 && v < 1e13 ? v : null;
}

/** The event a server message stands for, or null for messages this service does not use. */
export function eventFromMessage(m: Record<string, unknown>): VapiStoredEvent | null {
  if (!(VAPI_MESSAGES as readonly string[]).includes(m.type as string)) return null;
  const call = m.call && typeof m.call === 'object' && !Array.isArray(m.call) ? (m.call as Record<string, unknown>) : null;
  if (!call || typeof call.id !== 'string' || !call.id) return null;
  if (m.type === 'status-update') {
    if (typeof m.status !== 'string') return null;
    return {
      type: 'status-update',
      status: m.status,
      at: epochMs(m.timestamp),
      call: compactCall({ ...call, status: m.status, endedReason: m.endedReason ?? call.endedReason }),
    };
  }
  return {
    type: 'end-of-call-report',
    status: 'ended',
    at: epochMs(m.timestamp),
    call: compactCall({
      ...call,
      status: 'ended',
      endedReason: m.endedReason ?? call.endedReason,
      artifact: m.artifact ?? call.artifact,
      analysis: m.analysis ?? call.analysis,
      startedAt: m.startedAt ?? call.startedAt,
      endedAt: m.endedAt ?? call.endedAt,
    }),
  };
}

export function storedEventId(vapiCallId: string, e: Pick<VapiStoredEvent, 'type' | 'status'>): string {
  return e.type === 'status-update' ? `vapi:${vapiCallId}:status-update:${e.status}` : `vapi:${vapiCallId}:${e.type}`;
}

/** Returns false for a duplicate. */
export async function storeVapiEvent(deps: Pick<AppDeps, 'db' | 'clock'>, e: VapiStoredEvent, ourCallId: string | null): Promise<boolean> {
  const id = storedEventId(e.call.id, e);
  const kind = e.type === 'status-update' ? `${e.type}:${e.status}` : e.type;
  const n = await deps.db.prisma.$executeRaw`
    INSERT INTO provider_events (id, provider, call_id, event_type, payload, received_at)
    VALUES (${id}, 'vapi', ${ourCallId}, ${kind}, ${JSON.stringify(e)}::jsonb, ${deps.clock.now()})
    ON CONFLICT (id) DO NOTHING`;
  return n > 0;
}

const parse = (p: VapiStoredEvent | string): VapiStoredEvent => (typeof p === 'string' ? (JSON.parse(p) as VapiStoredEvent) : p);

/**
 * Claims the unprocessed events of these (our) call ids, in call order; with `owners`, a call's
 * only while owners[i] (null: anyone) still holds its lease, so a worker that lost a call (paused,
 * cut off) never takes the events its new owner waits for.
 */
export async function takeVapiEvents(deps: Pick<AppDeps, 'db' | 'clock'>, callIds: string[], owners?: (string | null)[]): Promise<VapiStoredEvent[]> {
  if (callIds.length === 0) return [];
  const ownerOf = owners ?? callIds.map(() => null);
  const rows = await deps.db.prisma.$queryRaw<{ payload: VapiStoredEvent | string }[]>`
    UPDATE provider_events SET processed_at = ${deps.clock.now()}
     WHERE processed_at IS NULL AND provider = 'vapi'
       AND call_id IN (SELECT w.id FROM unnest(${callIds}::text[], ${ownerOf}::text[]) AS w(id, owner)
                        WHERE w.owner IS NULL OR EXISTS (SELECT 1 FROM calls c WHERE c.id = w.id AND c.lease_owner = w.owner))
    RETURNING payload`;
  return rows.map((r) => parse(r.payload)).sort((a, b) => order(a) - order(b));
}

/**
 * The calls of the end-of-call-reports stored for these Vapi calls, consumed or not: looked up by
 * event id, so a report is found whenever it arrived and however often it was delivered.
 */
export async function storedVapiReports(deps: Pick<AppDeps, 'db'>, vapiCallIds: string[]): Promise<VapiCallObject[]> {
  if (vapiCallIds.length === 0) return [];
  const ids = vapiCallIds.map((id) => storedEventId(id, { type: 'end-of-call-report', status: 'ended' }));
  const rows = await deps.db.prisma.$queryRaw<{ payload: VapiStoredEvent | string }[]>`
    SELECT payload FROM provider_events WHERE id = ANY(${ids}::text[])`;
  return rows.map((r) => parse(r.payload).call);
}
