// Retell's webhook events in the shared provider_events store (../provider-events.ts): the three
// events a call's record needs, handed to the worker in the order a call goes through them.
import type { AppDeps } from '../../../deps.ts';
import { storedProviderEvents, storeProviderEvent, takeProviderEvents } from '../provider-events.ts';
import type { RetellCallObject } from './call-mapping.ts';
import type { RetellStoredEvent } from './provider.ts';

export const RETELL_EVENTS = ['call_started', 'call_ended', 'call_analyzed'] as const;
const ORDER: Record<string, number> = { call_started: 0, call_ended: 1, call_analyzed: 2 };

/** Returns false for a duplicate. */
export function storeRetellEvent(deps: Pick<AppDeps, 'db' | 'clock'>, e: RetellStoredEvent, ourCallId: string | null): Promise<boolean> {
  return storeProviderEvent(deps, { provider: 'retell', providerCallId: e.call.call_id, event: e.event }, ourCallId, e);
}

/** Claims the unprocessed events of these (our) call ids, oldest phase first (see takeProviderEvents). */
export async function takeRetellEvents(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  callIds: string[],
  owners?: (string | null)[],
): Promise<RetellStoredEvent[]> {
  const events = await takeProviderEvents<RetellStoredEvent>(deps, 'retell', callIds, owners);
  return events.sort((a, b) => (ORDER[a.event] ?? 9) - (ORDER[b.event] ?? 9));
}

/** The call objects of one kind of event stored for these Retell calls, consumed or not. */
export async function storedRetellCalls(
  deps: Pick<AppDeps, 'db'>,
  retellCallIds: string[],
  event: (typeof RETELL_EVENTS)[number],
): Promise<RetellCallObject[]> {
  return (await storedProviderEvents<RetellStoredEvent>(deps, 'retell', retellCallIds, event)).map((e) => e.call);
}
