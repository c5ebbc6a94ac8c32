// What the retention settings may delete and from when (docs/deployment.md#growth-and-retention).
// Pure: the worker's pruning statements take their cutoffs and statuses from here.
import { BATCH_STATUSES, isBatchTerminal, type BatchStatus } from './batch-state.ts';

const DAY_MS = 86_400_000;

/** Statuses a batch never leaves: only such batches are deleted, never one that may still dial. */
export const FINISHED_BATCH_STATUSES: readonly BatchStatus[] = BATCH_STATUSES.filter(isBatchTerminal);

/** Transcript statuses of a call whose analysis is still to be written (a worker holds the call for it). */
export const ANALYSIS_OUTSTANDING: readonly string[] = ['pending', 'processing'];

/** The moment before which rows are old enough to go, `days` before `now`; null for 0 (keep forever). */
export function retentionCutoff(now: Date, days: number): Date | null {
  return days > 0 ? new Date(now.getTime() - days * DAY_MS) : null;
}
