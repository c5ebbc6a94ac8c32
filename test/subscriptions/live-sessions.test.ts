// The key re-check that ends revoked sessions: a session tracked while a sweep is waiting for the
// database was not part of that check and must survive it (it was ended as "revoked" before).
import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.ts';
import { createLiveSessions } from '../../src/graphql/live-sessions.ts';
import { createLogger } from '../../src/logger.ts';

describe('live sessions re-check', () => {
  it('ends the sessions of keys found invalid, not one tracked while the check was running', async () => {
    let answer!: (rows: { keyHash: string }[]) => void;
    const asked: string[][] = [];
    const db = {
      pglite: {
        query: (_sql: string, params: unknown[]) => {
          asked.push(params[0] as string[]);
          return new Promise((resolve) => (answer = (rows) => resolve({ rows })));
        },
      },
    } as unknown as Database;
    const sessions = createLiveSessions(db, createLogger('silent'), 60_000);
    const ended: string[] = [];
    sessions.track('sk_revoked', () => ended.push('revoked'));
    const sweep = sessions.sweep();
    // The statement is out; a new session opens meanwhile.
    await expect.poll(() => asked.length).toBe(1);
    sessions.track('sk_opened_meanwhile', () => ended.push('opened meanwhile'));
    answer([]);
    await sweep;
    expect(ended).toEqual(['revoked']);
    expect(sessions.count('sk_opened_meanwhile')).toBe(1);
    sessions.close();
  });
});
