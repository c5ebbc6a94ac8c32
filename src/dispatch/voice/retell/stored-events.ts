// Use case: Retell webhook events, stored on receipt (answer fast) and handed once to the worker
// that holds the call. provider_events.id = `retell:<retell call id>:<event>`, so a redelivered
// event is a no-op insert and is never handed out twice.
import type { AppDeps } from '../../../deps.ts';
import type { RetellCallObject } from './call-mapping.ts';
import type { RetellStoredEvent } from './provider.ts';

export const RETELL_EVENTS = ['call_started', 'call_ended', 'call_analyzed'] as const;
const ORDER: Record<string, number> = { call_started: 0, call_ended: 1, call_analyzed: 2 };

/** Returns false for a duplicate. */
export async function storeRetellEvent(deps: Pick<AppDeps, 'db' | 'clock'>, e: RetellStoredEvent, ourCallId: string | null): Promise<boolean> {
  const id = `retell:${e.call.call_id}:${e.event}`;
  const n = await deps.db.prisma.$executeRaw`
    INSERT INTO provider_events (id, provider, call_id, event_type, payload, received_at)
    VALUES (${id}, 'retell', ${ourCallId}, ${e.event}, ${JSON.stringify(e)}::jsonb, ${deps.clock.now()})
    ON CONFLICT (id) DO NOTHING`;
  return n > 0;
}

/**
 * Claims the unprocessed events of these (our) call ids, oldest-phase first; with `owners`, a call's
 * only while owners[i] (null: anyone) still holds its lease, so a worker that lost a call (paused,
 * cut off) never takes the events its new owner waits for.
 */
export async function takeRetellEvents(deps: Pick<AppDeps, 'db' | 'clock'>, callIds: string[], owners?: (string | null)[]): Promise<RetellStoredEvent[]> {
  if (callIds.length === 0) return [];
  const ownerOf = owners ?? callIds.map(() => null);
  const rows = await deps.db.prisma.$queryRaw<{ payload: RetellStoredEvent | string }[]>`
    UPDATE provider_events SET processed_at = ${deps.clock.now()}
     WHERE processed_at IS NULL AND provider = 'retell'
       AND call_id IN (SELECT w.id FROM unnest(${callIds}::text[], ${ownerOf}::text[]) AS w(id, owner)
                        WHERE w.owner IS NULL OR EXISTS (SELECT 1 FROM calls c WHERE c.id = w.id AND c.lease_owner = w.owner))
    RETURNING payload`;
  return rows
    .map((r) => (typeof r.payload === 'string' ? (JSON.parse(r.payload) as RetellStoredEvent) : r.payload))
    .sort((a, b) => (ORDER[a.event] ?? 9) - (ORDER[b.event] ?? 9));
}

/**
 * The call objects of one kind of event stored for these Retell calls, consumed or not: looked up
 * by event id, so an event is found whenever it arrived and however often it was delivered.
 */
export async function storedRetellCalls(deps: Pick<AppDeps, 'db'>, retellCallIds: string[], event: (typeof RETELL_EVENTS)[number]): Promise<RetellCallObject[]> {
  if (retellCallIds.length === 0) return [];
  const ids = retellCallIds.map((id) => `retell:${id}:${event}`);
  const rows = await deps.db.prisma.$queryRaw<{ payload: RetellStoredEvent | string }[]>`
    SELECT payload FROM provider_events WHERE id = ANY(${ids}::text[])`;
  return rows.map((r) => (typeof r.payload === 'string' ? (JSON.parse(r.payload) as RetellStoredEvent) : r.payload).call);
}
