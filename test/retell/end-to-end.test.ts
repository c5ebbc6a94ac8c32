// A batch of 20 contacts placed through the Retell provider against the local fake Retell:
// signed webhooks (duplicated, reversed, one call_ended lost, one forged), reconciliation, and a
// worker stopped mid-batch and replaced without any second Retell call.
import { afterEach, describe, expect, it } from 'vitest';
import { sign } from 'retell-sdk';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES, makeContacts } from '../helpers/batch-requests.ts';
import { expectConsistentBatch, testWorker } from '../helpers/dispatch.ts';
import { startFakeRetell, type FakeRetell } from '../helpers/fake-retell.ts';
import { setAccountProvider } from '../../src/services/provider-config.ts';
import type { DispatchWorker } from '../../src/dispatch/worker.ts';

const KEY = 'key_retell_e2e_0123456789abcdef';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let t: TestApp | undefined;
let fake: FakeRetell | undefined;
afterEach(async () => {
  await fake?.close();
  await t?.close();
  t = fake = undefined;
});

async function setup(extra: Record<string, string> = {}) {
  fake = await startFakeRetell({
    apiKey: KEY,
    deliver: async (body, signature) => (await t!.request('POST', '/providers/retell/webhook', { rawBody: body, headers: { 'x-retell-signature': signature } })).status,
  });
  t = await createTestApp({
    config: { RETELL_BASE_URL: fake.url, RETELL_POLL_MS: '10', RETELL_DIAL_RATE_PER_NUMBER: '0', RETELL_RECONCILE_GRACE_MS: '0', ...extra },
  });
  const a = await t.seedAccount({ outcomeKeys: ['interested'] });
  await setAccountProvider(t.deps, a.account.id, 'retell', { apiKey: KEY });
  await t.deps.db.prisma.$executeRaw`UPDATE agents SET provider_agent_id = 'agent_retell_1' WHERE id = ${a.agent.id}`;
  // Short max duration: the lost call_ended is reconciled after a few clock jumps.
  await t.deps.db.prisma.$executeRaw`UPDATE accounts SET max_call_duration_seconds = 30 WHERE id = ${a.account.id}`;
  await t.deps.db.prisma.$executeRaw`UPDATE prompt_versions SET provider_agent_version = 7 WHERE id = ${a.version.id}`;
  const res = await t.request('POST', CALL_BATCHES, { key: a.apiKey, body: batchBody(a, { contacts: makeContacts(20).map((c, i) => ({ ...c, metadata: { n: i } })) }) });
  expect(res.status).toBeLessThan(300);
  const batchId: string = res.body.data?.id ?? res.body.id ?? res.body.batch_id ?? res.body.data?.batch_id;
  expect(batchId).toBeTruthy();
  return { a, batchId };
}

async function runUntilDone(batchId: string, worker: () => DispatchWorker, opts: Parameters<FakeRetell['finishAll']>[0] = {}) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    await fake!.finishAll(opts);
    const b = await t!.deps.db.prisma.batch.findUniqueOrThrow({ where: { id: batchId } });
    if (b.status === 'completed') break;
    if (Date.now() > deadline) throw new Error(`batch still ${b.status}`);
    // Lost call_ended events are settled by get-call once max duration + grace has passed.
    t!.clock.advance(10_000);
    await sleep(20);
  }
  await worker().settle();
}

function expectResults(calls: Array<{ status: string; hangupBy: string | null; disconnectReason: string | null; phoneNumber: string; providerCallId: string | null }>) {
  const want: Record<string, [string, string | null, string]> = {
    '0': ['no_answer', null, 'dial_no_answer'],
    '1': ['busy', null, 'dial_busy'],
    '2': ['failed', 'system', 'dial_failed'],
    '3': ['completed', 'user', 'user_hangup'],
  };
  for (const c of calls) {
    const [status, hangupBy, reason] = want[c.phoneNumber.at(-1)!] ?? ['completed', 'agent', 'agent_hangup'];
    expect({ n: c.phoneNumber, status: c.status, hangupBy: c.hangupBy, reason: c.disconnectReason }).toEqual({ n: c.phoneNumber, status, hangupBy, reason });
    expect(c.providerCallId).toMatch(/^rc_/);
  }
}

describe('Retell end to end (fake Retell)', () => {
  it('runs a 20-contact batch from create to results through signed webhooks', async () => {
    // A long lease: the worker's own "provider never ended the call" fallback must not race the
    // reconciliation while the test clock jumps.
    const { batchId } = await setup({ LEASE_MS: '600000' });
    const w = testWorker(t!.deps);
    w.start();
    try {
      // Rejected before anything is stored: a forged signature and a stale one.
      const forged = JSON.stringify({ event: 'call_ended', call: { call_id: 'rc_1', metadata: { account_id: 'x' } } });
      expect((await t!.request('POST', '/providers/retell/webhook', { rawBody: forged, headers: { 'x-retell-signature': await sign(forged, 'wrong-key') } })).status).toBe(401);
      const stale = `v=${Date.now() - 6 * 60_000},d=${'0'.repeat(64)}`;
      expect((await t!.request('POST', '/providers/retell/webhook', { rawBody: forged, headers: { 'x-retell-signature': stale } })).status).toBe(401);

      await runUntilDone(batchId, () => w, {
        duplicate: (c) => c.metadata.call_id.endsWith('5') || c.to_number.endsWith('4'),
        reversed: (c) => c.to_number.endsWith('3'),
        dropEnded: (c) => c.to_number.endsWith('9'),
      });
    } finally {
      await w.stop({ graceMs: 0 });
    }
    const { batch, calls } = await expectConsistentBatch(t!.deps, batchId);
    expect({ completed: batch.completed, failed: batch.failed, queued: batch.queued, inProgress: batch.inProgress }).toEqual({ completed: 14, failed: 6, queued: 0, inProgress: 0 });
    expectResults(calls);
    expect(fake!.creates).toHaveLength(20);
    expect(new Set(fake!.creates.map((c) => c.metadata.call_id)).size).toBe(20);
    expect(fake!.creates[0]).toMatchObject({ override_agent_id: 'agent_retell_1', override_agent_version: 7, from_number: '+14155550100' });
    expect(fake!.delivered.every((s) => s === 204)).toBe(true);
    expect(fake!.invalid).toEqual([]);
    const stored = await t!.deps.db.prisma.$queryRaw<{ n: bigint }[]>`SELECT count(*)::bigint AS n FROM provider_events`;
    // 14 answered calls x (started + ended) + 6 not connected x ended, minus the 2 lost call_ended; duplicates stored once.
    expect(Number(stored[0].n)).toBe(14 * 2 + 6 - 2);
  });

  it('a worker stopped mid-batch and replaced never places a second Retell call', async () => {
    const { batchId } = await setup();
    let w = testWorker(t!.deps, { leaseMs: 1000 });
    w.start();
    const until = Date.now() + 10_000;
    while (fake!.creates.length < 8 && Date.now() < until) await sleep(5);
    await w.stop({ graceMs: 0 });
    // The stopped worker's leases lapse; its calls are settled through get-call by the next one.
    t!.clock.advance(5_000);
    w = testWorker(t!.deps, { leaseMs: 1000 });
    w.start();
    try {
      await runUntilDone(batchId, () => w);
    } finally {
      await w.stop({ graceMs: 0 });
    }
    const { batch, calls } = await expectConsistentBatch(t!.deps, batchId);
    expect(batch.queued + batch.inProgress).toBe(0);
    expect(batch.completed + batch.failed).toBe(20);
    expect(new Set(fake!.creates.map((c) => c.metadata.call_id)).size).toBe(fake!.creates.length);
    expect(fake!.creates.length).toBeLessThanOrEqual(20);
    expect(calls.every((c) => c.providerCallId === null || c.providerCallId.startsWith('rc_'))).toBe(true);
    expect(fake!.invalid).toEqual([]);
  });
});
