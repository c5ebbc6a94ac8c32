// Retention deletes a bounded chunk per statement and, after each statement, leaves the database
// to everything else for as long as that statement took: pruning takes at most about half of the
// database's time, however much there is to delete. On PGlite (one session, run in this process's
// thread) a pruner sending statements back to back left the dispatch worker one statement per
// chunk, and no call ended while 10,000 were deleted (bench/retention.ts).
import { setTimeout as sleep } from 'node:timers/promises';

/** Runs one statement (or one chunk's), then pauses as long as it took. */
export async function paced<T>(statement: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await statement();
  await sleep(performance.now() - started);
  return result;
}

/** Runs `step` (one chunk; true while there may be more) until it is done, each step paced. */
export async function inChunks(step: () => Promise<boolean>): Promise<void> {
  while (await paced(step));
}
