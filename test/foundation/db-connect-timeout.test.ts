// DB_CONNECT_TIMEOUT_MS: a PostgreSQL server that accepts connections and never answers (a stuck
// server, a black-holing proxy) fails a statement, the service's start and the LISTEN session's
// connect within the timeout, as "unreachable", instead of hanging on pg's default of no timeout.
// No database is needed: the "server" is a local socket that reads nothing and says nothing.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeps } from '../../src/bootstrap.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/client.ts';
import { runStatement } from '../../src/db/sql-statement.ts';
import { isDatabaseUnreachable } from '../../src/db/unreachable.ts';
import { createListener } from '../../src/events/listener.ts';
import { createLogger } from '../../src/logger.ts';

const TIMEOUT_MS = 400;
/** Room for a busy machine; a hang would be the test's own timeout, far beyond it. */
const SLACK_MS = 3_000;

let server: net.Server;
let url: string;
const sockets = new Set<net.Socket>();

beforeAll(async () => {
  server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `postgresql://postgres@127.0.0.1:${(server.address() as net.AddressInfo).port}/silent`;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => server.close(resolve));
});

/** How long `p` took to reject, and with what. */
async function rejection(p: Promise<unknown>): Promise<{ ms: number; error: unknown }> {
  const t0 = performance.now();
  try {
    await p;
  } catch (error) {
    return { ms: performance.now() - t0, error };
  }
  throw new Error('resolved against a server that never answers');
}

describe('a PostgreSQL server that accepts and never answers', () => {
  it('fails a pooled statement and a Prisma query within connectTimeoutMs, as unreachable', async () => {
    const db = await openDatabase({ databaseUrl: url, poolSize: 2, connectTimeoutMs: TIMEOUT_MS });
    try {
      expect(db.connectTimeoutMs).toBe(TIMEOUT_MS);
      const raw = await rejection(runStatement(db, 'SELECT 1'));
      expect(raw.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      expect(raw.ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
      expect(isDatabaseUnreachable(raw.error)).toBe(true);
      const prisma = await rejection(db.prisma.$queryRawUnsafe('SELECT 1'));
      expect(prisma.ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
      expect(isDatabaseUnreachable(prisma.error)).toBe(true);
    } finally {
      await db.close();
    }
  });

  it("fails the LISTEN session's connect within the same timeout", async () => {
    const db = await openDatabase({ databaseUrl: url, poolSize: 1, connectTimeoutMs: TIMEOUT_MS });
    try {
      const listener = createListener(db, createLogger('silent'), { notify: () => {}, resync: () => {} });
      const r = await rejection(listener.start());
      expect(r.ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
      expect(isDatabaseUnreachable(r.error)).toBe(true);
      await listener.stop();
    } finally {
      await db.close();
    }
  });

  it('DB_CONNECT_TIMEOUT_MS reaches the pool: the service fails to start (migrating) within it', async () => {
    const config = loadConfig({ DATABASE_URL: url, DB_CONNECT_TIMEOUT_MS: String(TIMEOUT_MS), LOG_LEVEL: 'silent', APP_SECRET: 'x'.repeat(32) });
    expect(config.DB_CONNECT_TIMEOUT_MS).toBe(TIMEOUT_MS);
    expect(loadConfig({ LOG_LEVEL: 'silent' }).DB_CONNECT_TIMEOUT_MS).toBe(5_000);
    const r = await rejection(createDeps(config));
    expect(r.ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    expect(isDatabaseUnreachable(r.error)).toBe(true);
  });
});
