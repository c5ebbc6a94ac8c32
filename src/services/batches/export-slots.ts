// Slots for CSV exports of batch results: each streaming export holds one from before its first
// byte until it ends, however it ends, so one process streams at most EXPORTS_PER_PROCESS exports
// and one account at most EXPORTS_PER_ACCOUNT of them. A request beyond either gets RATE_LIMITED
// before anything is read.
import { AppError } from '../../errors.ts';

/** Seconds a refused client is told to wait: an export of a large batch runs for tens of seconds. */
const RETRY_AFTER_SECONDS = 10;

export interface ExportSlots {
  /** Takes a slot for the account or throws RATE_LIMITED; the returned release may be called more than once. */
  acquire(accountId: string): () => void;
  /** Slots held now (for tests and metrics). */
  held(): number;
}

export function createExportSlots(limits: { perProcess: number; perAccount: number }): ExportSlots {
  const byAccount = new Map<string, number>();
  let total = 0;
  const busy = (detail: string) => new AppError('RATE_LIMITED', 'Too many exports at once', [detail], { 'Retry-After': String(RETRY_AFTER_SECONDS) });

  return {
    acquire(accountId) {
      const mine = byAccount.get(accountId) ?? 0;
      if (mine >= limits.perAccount) throw busy(`At most ${limits.perAccount} exports at once per account; retry when one has finished`);
      if (total >= limits.perProcess) throw busy(`The server is running its ${limits.perProcess} exports at once; retry in ${RETRY_AFTER_SECONDS} s`);
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
