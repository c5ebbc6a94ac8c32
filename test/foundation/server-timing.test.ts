// SERVER_TIMING: each answer carries a Server-Timing header with its phases (bench/create-batch reads
// a create's); off by default, since it tells any client how long the server's steps take.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES, makeContacts } from '../helpers/batch-requests.ts';

let on: TestApp;
let off: TestApp;
let a: SeededAccount;
let b: SeededAccount;

beforeAll(async () => {
  [on, off] = await Promise.all([createTestApp({ config: { SERVER_TIMING: 'true' } }), createTestApp()]);
  [a, b] = await Promise.all([on.seedAccount(), off.seedAccount()]);
});
afterAll(() => Promise.all([on.close(), off.close()]));

const phasesOf = (header: string | null) =>
  new Map(
    (header ?? '').split(', ').map((entry) => {
      const [name, dur] = entry.split(';dur=');
      return [name, Number(dur)] as const;
    }),
  );

describe('Server-Timing', () => {
  it("a create's answer splits its time into the create's phases, each a duration in ms, and their total", async () => {
    const res = await on.request('PUT', CALL_BATCHES, { key: a.apiKey, body: batchBody(a, { idempotency_key: 'timed', contacts: makeContacts(5) }) });
    expect(res.status).toBe(201);
    const phases = phasesOf(res.headers.get('server-timing'));
    for (const name of [
      'auth',
      'body',
      'parse',
      'rest',
      'graphql',
      'check',
      'lookups',
      'batch-row',
      'screen',
      'rows',
      'copy-wait',
      'counts',
      'commit',
      'result',
      'answer',
      'total',
    ]) {
      expect(phases.get(name), name).toBeGreaterThanOrEqual(0);
    }
    const parts = [...phases].filter(([name]) => name !== 'total').reduce((sum, [, ms]) => sum + ms, 0);
    // Each phase ends where the next starts: together they are the total (to the rounding of each).
    expect(Math.abs(parts - phases.get('total')!)).toBeLessThan(0.01 * phases.size + 0.5);
  });

  it('other answers carry the phases they went through; without SERVER_TIMING none does', async () => {
    const listed = await on.request('GET', CALL_BATCHES, { key: a.apiKey });
    expect(listed.status).toBe(200);
    expect([...phasesOf(listed.headers.get('server-timing')).keys()]).toEqual(['auth', 'rest', 'result', 'answer', 'headers', 'total']);
    const created = await off.request('PUT', CALL_BATCHES, {
      key: b.apiKey,
      body: batchBody(b, { idempotency_key: 'untimed', contacts: makeContacts(2) }),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('server-timing')).toBeNull();
  });
});
