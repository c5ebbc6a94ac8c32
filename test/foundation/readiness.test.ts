// /healthz (liveness) and /readyz (readiness): the database answers, every migration is applied,
// this process's worker loop turns; a 503 names each reason. Checks run at most once a second.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { runStatement } from '../../src/db/sql-statement.ts';
import { listMigrations } from '../../src/db/migrate.ts';
import { createReadiness, databaseCheck } from '../../src/http/readiness.ts';
import { startBackground } from '../../src/background.ts';
import type { Database } from '../../src/db/client.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const readyz = async () => {
  const res = await t.app.fetch(new Request('http://test.local/readyz'));
  return { status: res.status, body: await res.json() };
};

describe('readiness', () => {
  it('is ready with the database up and migrated; /healthz stays the cheap liveness answer', async () => {
    expect(await readyz()).toEqual({ status: 200, body: { status: 'ready' } });
    const health = await t.app.fetch(new Request('http://test.local/healthz'));
    expect(health.status).toBe(200);
  });

  it('is 503 naming the migration while one is not applied, and ready again once it is', async () => {
    const latest = listMigrations().at(-1)!.name;
    const [row] = await runStatement<Record<string, unknown>>(t.deps.db, 'SELECT * FROM "_prisma_migrations" WHERE migration_name = $1', [latest]);
    await runStatement(t.deps.db, 'DELETE FROM "_prisma_migrations" WHERE migration_name = $1', [latest]);
    try {
      await expect.poll(readyz).toEqual({ status: 503, body: { status: 'unavailable', reasons: [`migrations: 1 not applied (${latest})`] } });
    } finally {
      await runStatement(
        t.deps.db,
        `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count) VALUES ($1, $2, now(), $3, 1)`,
        [row.id, row.checksum, latest],
      );
    }
    await expect.poll(readyz).toEqual({ status: 200, body: { status: 'ready' } });
  });

  it('a database that does not answer is a 503 after the timeout, not a hang', async () => {
    const silent = { kind: 'pglite', pglite: { query: () => new Promise(() => {}) } } as unknown as Database;
    const res = await createReadiness([databaseCheck(silent, 50)])();
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ status: 'unavailable', reasons: ['database: no answer within 50 ms'] });
  });

  it('runs its checks at most once per interval, however many requests come', async () => {
    let runs = 0;
    const ready = createReadiness([() => (runs++, null)], 60_000);
    const answers = await Promise.all(Array.from({ length: 100 }, () => ready()));
    expect(answers.every((r) => r.status === 200)).toBe(true);
    expect(runs).toBe(1);
  });

  it('a worker whose loop stopped turning makes the process not ready', async () => {
    const background = await startBackground(t.deps);
    try {
      expect(background.problem()).toBeNull();
      // Ten minutes without a finished tick (the bound is max(30 s, 20 polls)).
      expect(background.problem(Date.now() + 10 * 60_000)).toMatch(/^worker: its loop last finished a tick \d+ s ago$/);
      const ready = createReadiness([() => background.problem(Date.now() + 10 * 60_000)]);
      expect((await ready()).status).toBe(503);
    } finally {
      await background.stop();
    }
  });
});
