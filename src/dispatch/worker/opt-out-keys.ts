// How the agents of calls being analysed detect opt-outs: their own key, and whether detection
// (the default key and the phrase list, domain/opt-out.ts) is on. Batch settings are cached for a
// batch's life, but an agent's opt-out settings may be changed while its batches dial, so they are
// read again once a few seconds old: one statement per analysis group at most.
import type { OptOutRule } from '../../domain/opt-out.ts';
import { agentOptOutKeys } from '../store/dispatch-context.ts';
import { isStale, type AnalysisJob, type WorkerState } from './state.ts';

const OPT_OUT_KEY_TTL_MS = 10_000;
const OPT_OUT_KEY_CACHE_MAX = 2_000;

/**
 * The opt-out rule of each job's agent; on a failed read, the key cached with the batch with
 * detection on (detection is the default, and a spurious listing errs toward calling less).
 */
export async function optOutKeysOf(s: WorkerState, jobs: readonly AnalysisJob[]): Promise<(j: AnalysisJob) => OptOutRule> {
  const now = s.clock.now().getTime();
  const stale = [...new Set(jobs.map((j) => j.agentId).filter((id): id is string => id !== null))].filter((id) => {
    const hit = s.caches.optOutKeys.get(id);
    return !hit || isStale(now - hit.at, OPT_OUT_KEY_TTL_MS);
  });
  if (stale.length > 0) {
    try {
      const read = await agentOptOutKeys(s.deps, stale);
      if (s.caches.optOutKeys.size + stale.length > OPT_OUT_KEY_CACHE_MAX) s.caches.optOutKeys.clear();
      // An agent deleted meanwhile: no key, detection on.
      for (const id of stale) s.caches.optOutKeys.set(id, { rule: read.get(id) ?? { key: null, detection: true }, at: now });
    } catch (err) {
      s.log.warn({ err }, "could not read the agents' opt-out settings; using the keys read with their batches");
    }
  }
  return (j) => {
    const hit = j.agentId !== null ? s.caches.optOutKeys.get(j.agentId) : undefined;
    return hit ? hit.rule : { key: j.optOutOutcomeKey, detection: true };
  };
}
