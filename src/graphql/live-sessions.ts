// Subscriptions and WebSockets outlive the request that authenticated them, so a key revoked, or an
// account disabled or cut off from the API, afterwards must still end them. Every open session is
// tracked by its key's hash; one statement per interval per process re-checks all of them, which
// also covers changes made through another API process (nothing to deliver, nothing to miss).
// They are counted per key, per account and in all, each with its cap: a session holds memory
// for as long as it is open, and its share of the live values the process sends.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Database } from '../db/client.ts';
import { hashApiKey, validKeyHashes } from '../services/auth/api-keys.ts';

export type SessionCaps = Pick<Config, 'MAX_SUBSCRIPTIONS_PER_KEY' | 'MAX_SUBSCRIPTIONS_PER_ACCOUNT' | 'MAX_SUBSCRIPTIONS_PER_PROCESS'>;

/** Which cap one more session would pass, and the error a subscription refused for it gets. */
export interface SessionRefusal {
  cap: 'key' | 'account' | 'process';
  message: string;
}

export interface LiveSessions {
  /**
   * Tracks a session authenticated with `token` (of the account `accountId`); `end` runs once when
   * the key stops authenticating. Returns the untrack function.
   */
  track(token: string, end: () => void, accountId?: string): () => void;
  /** Sessions open with `token` in this process. */
  count(token: string): number;
  /** The cap one more session of this key and account would pass now; null when it fits. */
  refusal(token: string, accountId: string | undefined, caps: SessionCaps): SessionRefusal | null;
  /** Re-checks every tracked key now (the timer does it every interval). */
  sweep(): Promise<void>;
  close(): void;
}

export function createLiveSessions(db: Database, logger: Logger, intervalMs: number): LiveSessions {
  const byKey = new Map<string, Set<() => void>>();
  const byAccount = new Map<string, number>();
  let total = 0;
  let sweeping: Promise<void> | undefined;

  async function recheck(): Promise<void> {
    if (byKey.size === 0) return;
    const checked = [...byKey.keys()];
    let valid: Set<string>;
    try {
      valid = await validKeyHashes(db, checked);
    } catch (err) {
      // A database blip must not end every client's subscriptions; the next sweep decides.
      logger.warn({ err }, 'live sessions: key re-check failed');
      return;
    }
    // Only the keys this sweep asked about: one first tracked while it was waiting was not checked.
    for (const hash of checked) {
      const ends = byKey.get(hash);
      if (!ends || valid.has(hash)) continue;
      byKey.delete(hash);
      for (const end of ends) end();
    }
  }

  const sweep = () => (sweeping ??= recheck().finally(() => (sweeping = undefined)));
  const timer = setInterval(() => void sweep(), intervalMs);
  timer.unref();

  return {
    track(token, end, accountId) {
      const hash = hashApiKey(token);
      let ends = byKey.get(hash);
      if (!ends) byKey.set(hash, (ends = new Set()));
      let once = false;
      const endOnce = () => {
        if (once) return;
        once = true;
        end();
      };
      ends.add(endOnce);
      total++;
      if (accountId) byAccount.set(accountId, (byAccount.get(accountId) ?? 0) + 1);
      let untracked = false;
      return () => {
        if (untracked) return;
        untracked = true;
        ends.delete(endOnce);
        if (ends.size === 0 && byKey.get(hash) === ends) byKey.delete(hash);
        total--;
        if (!accountId) return;
        const left = (byAccount.get(accountId) ?? 1) - 1;
        if (left > 0) byAccount.set(accountId, left);
        else byAccount.delete(accountId);
      };
    },
    count: (token) => byKey.get(hashApiKey(token))?.size ?? 0,
    refusal(token, accountId, caps) {
      if ((byKey.get(hashApiKey(token))?.size ?? 0) >= caps.MAX_SUBSCRIPTIONS_PER_KEY) {
        return { cap: 'key', message: `At most ${caps.MAX_SUBSCRIPTIONS_PER_KEY} subscriptions and sockets at once per API key` };
      }
      if (accountId && (byAccount.get(accountId) ?? 0) >= caps.MAX_SUBSCRIPTIONS_PER_ACCOUNT) {
        return { cap: 'account', message: `At most ${caps.MAX_SUBSCRIPTIONS_PER_ACCOUNT} subscriptions and sockets at once per account` };
      }
      if (total >= caps.MAX_SUBSCRIPTIONS_PER_PROCESS) {
        return {
          cap: 'process',
          message: `This server holds its ${caps.MAX_SUBSCRIPTIONS_PER_PROCESS} subscriptions and sockets; retry later or on another server`,
        };
      }
      return null;
    },
    sweep,
    close() {
      clearInterval(timer);
      byKey.clear();
      byAccount.clear();
      total = 0;
    },
  };
}
