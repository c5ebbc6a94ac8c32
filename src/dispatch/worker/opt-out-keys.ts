// Which outcome key means "opt out" for the agents of calls being analysed. Batch settings are
// cached for a batch's life, but an agent's opt-out key may be set or changed while its batches
// dial, so it is read again once it is a few seconds old: one statement per analysis group at most.
import { agentOptOutKeys } from '../store/dispatch-context.ts';
import type { AnalysisJob, WorkerState } from './state.ts';

const OPT_OUT_KEY_TTL_MS = 10_000;
const OPT_OUT_KEY_CACHE_MAX = 2_000;

/** The opt-out key of each job's agent; on a failed read, the key cached with the batch. */
export async function optOutKeysOf(s: WorkerState, jobs: readonly AnalysisJob[]): Promise<(j: AnalysisJob) => string | null> {
  const now = Date.now();
  const stale = [...new Set(jobs.map((j) => j.agentId).filter((id): id is string => id !== null))].filter((id) => {
    const hit = s.optOutKeys.get(id);
    return !hit || now - hit.at >= OPT_OUT_KEY_TTL_MS;
  });
  if (stale.length > 0) {
    try {
      const read = await agentOptOutKeys(s.deps, stale);
      if (s.optOutKeys.size + stale.length > OPT_OUT_KEY_CACHE_MAX) s.optOutKeys.clear();
      for (const id of stale) s.optOutKeys.set(id, { key: read.get(id) ?? null, at: now });
    } catch (err) {
      s.log.warn({ err }, "could not read the agents' opt-out keys; using the keys read with their batches");
    }
  }
  return (j) => {
    const hit = j.agentId !== null ? s.optOutKeys.get(j.agentId) : undefined;
    return hit ? hit.key : j.optOutOutcomeKey;
  };
}
