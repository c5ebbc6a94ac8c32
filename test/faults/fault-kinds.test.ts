// A short, deterministic version of each fault the campaign injects (bench/faults, docs/dispatch.md
// "Fault campaign"): the campaign's own cluster (two src/worker.ts processes and one API on one
// PostgreSQL database, the Retell fake as a process of its own), nemesis and checker. Per fault: a
// batch of answered calls that talk for a fixed while; once the targeted worker holds calls in
// conversation (or at once, for the provider's faults, so that they meet the dials), the fault is
// injected with fixed parameters and healed; the batch settles; the checker finds no violation, and
// what the fault must have caused happened (the other worker adopted the calls of a paused, killed
// or cut-off worker). PostgreSQL only (the processes share one database): skipped otherwise,
// saying why; the clock step also needs libfaketime.
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKETIME_LIB, startCluster, type Cluster, type Proc } from '../../bench/faults/cluster.ts';
import { check } from '../../bench/faults/checker.ts';
import { inject, type FaultChoice, type FaultKind } from '../../bench/faults/nemesis.ts';
import { readProviderLog } from '../../bench/faults/provider-log.ts';
import { CALL_BATCHES, persist, settled } from '../../bench/faults/round.ts';
import { rng } from '../../bench/faults/scenario.ts';
import { TEST_DATABASE_URL } from '../helpers/database.ts';
import { waitFor } from '../helpers/wait.ts';

const skipReason = !TEST_DATABASE_URL ? 'PostgreSQL only (TEST_DATABASE_URL is not set): the processes share one database' : null;
if (skipReason) console.warn(`fault-kinds test skipped: ${skipReason}`);

const LEASE_MS = 2_000;
/** Longer than any fault held below, so that conversations outlive it. */
const TALK_MS = 7_000;
const CALLS = 6;

describe.skipIf(skipReason !== null)(`each fault kind, once, deterministically${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  let c: Cluster;
  let round = 0;

  beforeAll(async () => {
    c = await startCluster({
      serverUrl: TEST_DATABASE_URL!,
      workers: 2,
      apis: 1,
      leaseMs: LEASE_MS,
      dir: fs.mkdtempSync(path.join(os.tmpdir(), 'fault-kinds-')),
    });
    await c.setProviderMode({ talkMs: TALK_MS });
  }, 150_000);
  afterAll(() => c?.close(), 60_000);

  /** Calls of `batchId` in conversation under `w`'s lease. */
  const heldBy = async (w: Proc, batchId: string) =>
    (
      await c.db.prisma.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM calls WHERE batch_id = ${batchId} AND status = 'in_progress' AND lease_owner LIKE ${`${w.name}#%`}`
    )[0]!.n;

  const adoptedBy = async (batchId: string) =>
    (
      await c.db.prisma.$queryRaw<{ worker: string }[]>`
      SELECT e.detail->>'worker' AS worker FROM call_events e JOIN calls k ON k.id = e.call_id
       WHERE k.batch_id = ${batchId} AND e.detail->>'event' = 'adopted'`
    ).map((r) => r.worker.split('#')[0]!);

  /** One batch under one fault; returns the batch id, the other worker's adoptions, and the checker's verdict. */
  async function underFault(kind: FaultKind, choose: (target: Proc) => FaultChoice, o: { atOnce?: boolean } = {}) {
    round += 1;
    let target = c.workers().find((w) => w.alive)!;
    const contacts = Array.from({ length: CALLS }, (_, i) => ({
      contact_id: `k${round}-${i}`,
      phone_number: `+1415${String(6_000_000 + round * 100 + i * 10 + 4 + (i % 5))}`,
    }));
    const created = await persist(c, 'PUT', CALL_BATCHES, {
      idempotency_key: `fault-kinds-${process.pid}-${round}`,
      agent_id: c.account.agentId,
      version_id: c.account.versionId,
      interruption: true,
      use_alternate_number: false,
      start_mode: 'immediate',
      schedule_date: '2030-01-15',
      schedule_time: '09:30',
      schedule_timezone: 'America/New_York',
      concurrency: CALLS,
      callback_url: c.receiverUrl,
      contacts,
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const batchId: string = created.json.data.batch_id;
    if (!o.atOnce) {
      // The fault goes to a worker that holds calls in conversation (whichever claimed them).
      await waitFor(
        async () => {
          for (const w of c.workers()) if ((await heldBy(w, batchId)) > 0) return ((target = w), true);
          return false;
        },
        { timeoutMs: 30_000, what: 'a worker holds calls in conversation' },
      );
    }
    const injected = await inject(c, kind, rng(round), LEASE_MS, choose(target));
    await waitFor(() => settled(c, [batchId]), { timeoutMs: 90_000, intervalMs: 200, what: `batch settled after ${kind}` });
    // The checker reads the receiver's log: every delivery its row calls delivered is in it (the
    // receiver logs before it answers, so this holds at once; waited for, not assumed).
    await waitFor(
      async () => {
        const delivered = await c.db.prisma.$queryRaw<
          { id: string }[]
        >`SELECT id FROM webhook_deliveries WHERE batch_id = ${batchId} AND status = 'delivered'`;
        const received = new Set(c.received.map((r) => r.id));
        return delivered.every((d) => received.has(d.id));
      },
      { what: 'every delivered webhook in the receiver log' },
    );
    const violations = await check({
      db: c.db,
      batches: [{ id: batchId, maxDialsPerCall: 1, maxDialsPerNumber: 1 }],
      provider: readProviderLog(c.providerLog).lines,
      received: c.received,
      clockToleranceMs: LEASE_MS / 2,
    });
    return { batchId, injected, target, violations, adopted: await adoptedBy(batchId) };
  }

  it('pause: a worker stopped (SIGSTOP) for 2.5 leases; the other adopts its conversations and the resumed one touches none', async () => {
    const r = await underFault('pause', (target) => ({ target, heldMs: 2.5 * LEASE_MS }));
    expect(r.violations).toEqual([]);
    expect(r.adopted.length).toBeGreaterThan(0);
    expect(r.adopted.every((w) => w !== r.injected.target)).toBe(true);
  }, 150_000);

  it('kill: a worker killed (SIGKILL) and restarted; its conversations are adopted, none dialled again', async () => {
    const r = await underFault('kill', (target) => ({ target, heldMs: 300 }));
    expect(r.violations).toEqual([]);
    expect(r.adopted.length).toBeGreaterThan(0);
  }, 150_000);

  it("partition_db: a worker cut off from the database for 2.5 leases (held bytes resumed); the other adopts, the cut-off one's late writes do not apply", async () => {
    const r = await underFault('partition_db', (target) => ({ target, heldMs: 2.5 * LEASE_MS, heal: 'resume' }));
    expect(r.violations).toEqual([]);
    expect(r.adopted.length).toBeGreaterThan(0);
  }, 150_000);

  it('partition_db healed by reset: the connections are gone when it heals', async () => {
    const r = await underFault('partition_db', (target) => ({ target, heldMs: 2.5 * LEASE_MS, heal: 'reset' }));
    expect(r.violations).toEqual([]);
    expect(r.adopted.length).toBeGreaterThan(0);
  }, 150_000);

  it('partition_provider: a worker cut off from the provider for a lease while its calls talk', async () => {
    const r = await underFault('partition_provider', (target) => ({ target, heldMs: LEASE_MS, heal: 'resume' }));
    expect(r.violations).toEqual([]);
  }, 150_000);

  it('pg_kill: every database connection of the worker holding calls is terminated', async () => {
    const r = await underFault('pg_kill', (target) => ({ target }));
    expect(r.violations).toEqual([]);
    expect(r.injected.note).toMatch(/^[1-9]\d* connections$/);
  }, 150_000);

  it('provider_slow: every provider request answered 3 s late while the batch dials', async () => {
    const r = await underFault('provider_slow', () => ({ heldMs: 3_000 }), { atOnce: true });
    expect(r.violations).toEqual([]);
  }, 150_000);

  it('provider_fail: creates refused (half after making the call) and lookups failing for 1.5 s while the batch dials', async () => {
    const r = await underFault('provider_fail', () => ({ heldMs: 1_500 }), { atOnce: true });
    expect(r.violations).toEqual([]);
  }, 150_000);

  it.skipIf(!FAKETIME_LIB)(
    `clock_step: a worker's clock steps back 0.4 of a lease for 2 s${FAKETIME_LIB ? '' : ' (skipped: libfaketime is not installed)'}`,
    async () => {
      const r = await underFault('clock_step', (target) => ({ target, heldMs: 2_000, offsetMs: -0.4 * LEASE_MS }));
      expect(r.violations).toEqual([]);
    },
    150_000,
  );
});
