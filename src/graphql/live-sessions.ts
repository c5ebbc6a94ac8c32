// Subscriptions and WebSockets outlive the request that authenticated them, so a key revoked, or an
// account disabled or cut off from the API, afterwards must still end them. Every open session is
// tracked by its key's hash; one statement per interval per process re-checks all of them, which
// also covers changes made through another API process (nothing to deliver, nothing to miss).
import type { Logger } from 'pino';
import type { Database } from '../db/client.ts';
import { hashApiKey, validKeyHashes } from '../services/auth/api-keys.ts';

export interface LiveSessions {
  /** Tracks a session authenticated with `token`; `end` runs once when the key stops authenticating. Returns the untrack function. */
  track(token: string, end: () => void): () => void;
  /** Sessions open with `token` in this process. */
  count(token: string): number;
  /** Re-checks every tracked key now (the timer does it every interval). */
  sweep(): Promise<void>;
  close(): void;
}

export function createLiveSessions(db: Database, logger: Logger, intervalMs: number): LiveSessions {
  const byKey = new Map<string, Set<() => void>>();
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
    track(token, end) {
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
      return () => {
        ends.delete(endOnce);
        if (ends.size === 0 && byKey.get(hash) === ends) byKey.delete(hash);
      };
    },
    count: (token) => byKey.get(hashApiKey(token))?.size ?? 0,
    sweep,
    close() {
      clearInterval(timer);
      byKey.clear();
    },
  };
}
