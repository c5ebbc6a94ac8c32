// Embedded PGlite runs each statement on the process's own thread, one at a time, and its lock hands
// over from one waiter to the next inside a single turn of the event loop: a queue of statements ran
// back to back while no socket was read and no timer fired (bench:load, issue 31: another tenant's
// requests waited seconds behind exports and deep pages). This takes PGlite's turns in hand: every
// statement (or transaction) starts on a turn of its own, and bulk work — an export's chunks, the
// steps of a deep page, the analyser — runs only while nothing else waits, or once it has waited
// BULK_MAX_WAIT_MS, so a tenant's permitted bulk reads slow others by one statement at most.
import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';
import type { PGlite } from '@electric-sql/pglite';

export type StatementLane = 'interactive' | 'bulk';

/** The longest a bulk statement waits behind interactive ones before it runs anyway. */
export const BULK_MAX_WAIT_MS = 250;

const callerLane = new AsyncLocalStorage<StatementLane>();

/** Runs `work` with its PGlite statements in the bulk lane (no effect on PostgreSQL). */
export function inBulkLane<T>(work: () => Promise<T>): Promise<T> {
  return callerLane.run('bulk', work);
}

interface Turn {
  queuedAt: number;
  start(): void;
}

export interface TurnStats {
  /** Statements (or transactions) waiting for their turn, by lane. */
  waiting: Record<StatementLane, number>;
}

/** The queue in front of one PGlite instance's lock. `now` is injectable for tests. */
export function takeTurns(pglite: PGlite, now: () => number = () => performance.now()): TurnStats {
  const queues: Record<StatementLane, Turn[]> = { interactive: [], bulk: [] };
  let busy = false;
  // Every public entry (query, exec, transaction, describeQuery) takes this lock first; it stays
  // PGlite's own, only ever reached by one caller at a time from here.
  const host = pglite as unknown as { _runExclusiveTransaction<T>(fn: () => Promise<T>): Promise<T> };
  const exclusive = host._runExclusiveTransaction.bind(pglite);

  function next(): Turn | undefined {
    const bulk = queues.bulk[0];
    if (bulk && (queues.interactive.length === 0 || now() - bulk.queuedAt >= BULK_MAX_WAIT_MS)) return queues.bulk.shift();
    return queues.interactive.shift();
  }

  function pump(): void {
    if (busy || (queues.interactive.length === 0 && queues.bulk.length === 0)) return;
    busy = true;
    // Chosen on the new turn, so what arrived meanwhile (an interactive read, say) is weighed too.
    setImmediate(() => {
      const turn = next();
      if (turn) turn.start();
      else busy = false;
    });
  }

  host._runExclusiveTransaction = <T>(fn: () => Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const lane = callerLane.getStore() ?? 'interactive';
      queues[lane].push({
        queuedAt: now(),
        // Run in its caller's async context, not in that of whoever's turn ended before it.
        start: AsyncResource.bind(
          () =>
            void exclusive(fn)
              .then(resolve, reject)
              .finally(() => {
                busy = false;
                pump();
              }),
        ),
      });
      pump();
    });

  return {
    get waiting() {
      return { interactive: queues.interactive.length, bulk: queues.bulk.length };
    },
  };
}
