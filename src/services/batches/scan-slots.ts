// Slots for the reads that walk a whole batch: CSV exports of its results, and result pages
// filtered by outcome (a jsonpath over every call of the batch: ~180 ms at 100,000 calls). Each
// such read holds one slot from before it reads anything until it ends, however it ends, so one
// process runs at most `perProcess` of a kind and one account at most `perAccount`. A request
// beyond either gets RATE_LIMITED before any of the batch's calls is read.
import { AppError } from '../../errors.ts';

export interface ScanSlots {
  /** Takes a slot for the account or throws RATE_LIMITED; the returned release may be called more than once. */
  acquire(accountId: string): () => void;
  /** Slots held now (for tests and metrics). */
  held(): number;
}

export interface ScanSlotLimits {
  perProcess: number;
  perAccount: number;
  /** What the slots are for, plural: the refusals name it (`Too many exports at once`). */
  what: string;
  /** Seconds a refused client is told to wait: about as long as one such read takes. */
  retryAfterSeconds: number;
}

export function createScanSlots(limits: ScanSlotLimits): ScanSlots {
  const byAccount = new Map<string, number>();
  let total = 0;
  const { what, retryAfterSeconds } = limits;
  const busy = (detail: string) => new AppError('RATE_LIMITED', `Too many ${what} at once`, [detail], { 'Retry-After': String(retryAfterSeconds) });

  return {
    acquire(accountId) {
      const mine = byAccount.get(accountId) ?? 0;
      if (mine >= limits.perAccount) throw busy(`At most ${limits.perAccount} ${what} at once per account; retry when one has finished`);
      if (total >= limits.perProcess) throw busy(`The server is running its ${limits.perProcess} ${what} at once; retry in ${retryAfterSeconds} s`);
      byAccount.set(accountId, mine + 1);
      total++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        total--;
        const left = (byAccount.get(accountId) ?? 1) - 1;
        if (left > 0) byAccount.set(accountId, left);
        else byAccount.delete(accountId);
      };
    },
    held: () => total,
  };
}

/**
 * The slots as one request sees them: its reads of this kind share one slot, so the fields of one
 * GraphQL document (aliases, which run at once) are never refused by each other. How many such
 * fields a document may hold is its cost limits' business (graphql/plugins/query-cost.ts).
 */
export function oneSlotPerRequest(slots: ScanSlots): ScanSlots {
  let shared: { release: () => void; readers: number } | null = null;
  return {
    acquire(accountId) {
      shared ??= { release: slots.acquire(accountId), readers: 0 };
      const mine = shared;
      mine.readers++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        if (--mine.readers > 0) return;
        mine.release();
        if (shared === mine) shared = null;
      };
    },
    held: () => slots.held(),
  };
}
