// Use case: a provider's pushed events (webhooks), stored on receipt so the route answers at once
// whichever API process got them, and handed once to the worker that holds the call.
// provider_events.id = `<provider>:<provider call id>:<event>`, so a redelivered event is a no-op
// insert and is never handed out twice. Shared by every provider; retention is
// services/retention/prune-provider-events.ts.
import type { AppDeps } from '../../deps.ts';

export interface StoredEventKey {
  provider: string;
  providerCallId: string;
  event: string;
}

const eventId = (k: StoredEventKey) => `${k.provider}:${k.providerCallId}:${k.event}`;

/** Returns false for a duplicate. `ourCallId`: our call id when the event names it (its metadata). */
export async function storeProviderEvent(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  key: StoredEventKey,
  ourCallId: string | null,
  payload: unknown,
): Promise<boolean> {
  const n = await deps.db.prisma.$executeRaw`
    INSERT INTO provider_events (id, provider, call_id, event_type, payload, received_at)
    VALUES (${eventId(key)}, ${key.provider}, ${ourCallId}, ${key.event}, ${JSON.stringify(payload)}::jsonb, ${deps.clock.now()})
    ON CONFLICT (id) DO NOTHING`;
  return n > 0;
}

const parsed = <T>(payload: T | string): T => (typeof payload === 'string' ? (JSON.parse(payload) as T) : payload);

/**
 * Claims the provider's unprocessed events of these (our) call ids, in no set order; with
 * `owners`, a call's only while owners[i] (null: anyone) still holds its lease, so a worker that
 * lost a call (paused, cut off) never takes the events its new owner waits for.
 */
export async function takeProviderEvents<T>(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  provider: string,
  callIds: string[],
  owners?: (string | null)[],
): Promise<T[]> {
  if (callIds.length === 0) return [];
  const ownerOf = owners ?? callIds.map(() => null);
  const rows = await deps.db.prisma.$queryRaw<{ payload: T | string }[]>`
    UPDATE provider_events SET processed_at = ${deps.clock.now()}
     WHERE processed_at IS NULL AND provider = ${provider}
       AND call_id IN (SELECT w.id FROM unnest(${callIds}::text[], ${ownerOf}::text[]) AS w(id, owner)
                        WHERE w.owner IS NULL OR EXISTS (SELECT 1 FROM calls c WHERE c.id = w.id AND c.lease_owner = w.owner))
    RETURNING payload`;
  return rows.map((r) => parsed(r.payload));
}

/**
 * The payloads of one kind of event stored for these provider calls, consumed or not: looked up by
 * event id, so an event is found whenever it arrived and however often it was delivered.
 */
export async function storedProviderEvents<T>(deps: Pick<AppDeps, 'db'>, provider: string, providerCallIds: string[], event: string): Promise<T[]> {
  if (providerCallIds.length === 0) return [];
  const ids = providerCallIds.map((providerCallId) => eventId({ provider, providerCallId, event }));
  const rows = await deps.db.prisma.$queryRaw<{ payload: T | string }[]>`
    SELECT payload FROM provider_events WHERE id = ANY(${ids}::text[])`;
  return rows.map((r) => parsed(r.payload));
}
