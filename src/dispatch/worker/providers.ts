// Which settings and which voice provider a call uses: batch settings are cached per batch, each
// account's provider name for a few seconds (it decides dial pacing before any call is claimed).
import { accountProviders } from '../../services/accounts/provider-config.ts';
import type { ClaimInput } from '../store/claim-calls.ts';
import { loadDispatchContexts } from '../store/dispatch-context.ts';
import type { VoiceProvider } from '../voice/provider.ts';
import { isStale, type WorkerState } from './state.ts';

const CONTEXT_CACHE_MAX = 2000;
/** How long an account's provider name is trusted before it is read again (pacing). */
const ACCOUNT_PROVIDER_TTL_MS = 10_000;

/** Loads the settings of these batches unless cached; the cache keeps what live calls use. */
export async function loadBatchSettings(s: WorkerState, batchIds: string[]): Promise<void> {
  const missing = [...new Set(batchIds)].filter((b) => !s.caches.contexts.has(b));
  if (missing.length === 0) return;
  if (s.caches.contexts.size + missing.length > CONTEXT_CACHE_MAX) {
    const inUse = new Set([...s.book.live.values()].map((c) => c.batchId));
    for (const k of s.caches.contexts.keys()) if (!inUse.has(k)) s.caches.contexts.delete(k);
  }
  const loaded = await loadDispatchContexts(s.deps, missing);
  const at = s.clock.now().getTime();
  for (const [k, v] of loaded) {
    s.caches.contexts.set(k, v);
    s.caches.accountProviders.set(v.accountId, { name: v.provider, at });
  }
}

/**
 * Drops cached settings of a batch whose enforced window changed since they were read (its
 * windows version moved); calls in flight keep the settings they started with.
 */
export function forgetStaleWindows(s: WorkerState, calls: readonly { batchId: string; windowsVersion: number }[]): void {
  for (const c of calls) {
    const cached = s.caches.contexts.get(c.batchId);
    if (cached && cached.windowsVersion !== c.windowsVersion) s.caches.contexts.delete(c.batchId);
  }
}

/** The provider of this name, or null when this process has none (or it cannot be built). */
export function knownProvider(s: WorkerState, name: string): VoiceProvider | null {
  try {
    return s.providers.has(name) ? s.providers.get(name) : null;
  } catch {
    return null;
  }
}

export async function refreshAccountProviders(s: WorkerState, accountIds: string[]): Promise<void> {
  const now = s.clock.now().getTime();
  const stale = accountIds.filter((a) => {
    const hit = s.caches.accountProviders.get(a);
    return !hit || isStale(now - hit.at, ACCOUNT_PROVIDER_TTL_MS);
  });
  if (stale.length === 0) return;
  const names = await accountProviders(s.deps, stale);
  const at = s.clock.now().getTime();
  for (const [a, name] of names) s.caches.accountProviders.set(a, { name, at });
}

/** The pacing key the account's pool batches share (their numbers are chosen per dial, after the claim). */
const POOL_KEY = '\u0000pool';

/** Dials these numbers may start within the next poll interval, together. */
function poolSlots(s: WorkerState, numbers: readonly string[], rate: number): number {
  return numbers.reduce((sum, n) => sum + s.pacer.available(n, rate, s.settings.pollMs), 0);
}

/**
 * Dial pacing for one account's claim, when its provider paces dials: each batch gets at most
 * the slots its from-number has within the next poll interval, shared by the batches that dial
 * from that number; the account's pool batches share the slots of all its numbers (each dial then
 * takes a slot of the number chosen for it, dial.ts); a batch whose settings this worker hasn't
 * loaded yet gets one call (its number is learnt from it). undefined: unpaced.
 */
export async function dialPacing(s: WorkerState, accountId: string): Promise<ClaimInput['limitAllocation']> {
  const name = s.caches.accountProviders.get(accountId)?.name;
  const provider = name ? knownProvider(s, name) : null;
  if (!provider?.dialRate) return undefined;
  let rate: number;
  try {
    rate = await provider.dialRate(accountId);
  } catch (err) {
    s.log.warn({ err, accountId }, 'could not read dial pacing; claiming one call');
    return (alloc) => new Map([...alloc].slice(0, 1).map(([id]) => [id, 1]));
  }
  if (!(rate > 0)) return undefined;
  return (alloc) => {
    const left = new Map<string, number>();
    const out = new Map<string, number>();
    for (const [batchId, wanted] of alloc) {
      const ctx = s.caches.contexts.get(batchId);
      const from = ctx?.from ?? (ctx?.poolNumbers.length ? POOL_KEY : null);
      if (!from) {
        out.set(batchId, Math.min(wanted, 1));
        continue;
      }
      const slots = left.get(from) ?? poolSlots(s, from === POOL_KEY ? ctx!.poolNumbers : [from], rate);
      const n = Math.min(wanted, slots);
      left.set(from, slots - n);
      out.set(batchId, n);
    }
    return out;
  };
}
