// One round of the campaign: its batches are created through the APIs, dispatched by the workers
// while the nemesis injects its faults at drawn moments and cancellations land, every fault is
// healed, the round settles (every batch closed, every call ended and analysed, every webhook out)
// and the checker judges it. Retries wait 60 s at least: the round brings a waiting retry due at
// once (its next_attempt_at moved to now), as if the time had passed; batches with a calling window
// are left alone (their waits are the window's).
import type { Cluster } from './cluster.ts';
import { check, type RoundBatch, type Violation } from './checker.ts';
import { healAll, inject, type FaultKind, type Injected } from './nemesis.ts';
import { readProviderLog, type ProviderLogLine } from './provider-log.ts';
import { planRound, type Rng } from './scenario.ts';

export const CALL_BATCHES = '/api/v1/public/call-batches';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface RoundOptions {
  round: number;
  rng: Rng;
  leaseMs: number;
  /** How long faults and cancellations may start after the round's batches are created. */
  roundMs: number;
  faults: FaultKind[];
  /** The longest wait for the round to settle once every fault is healed. */
  settleMs: number;
  tag: string;
  clockToleranceMs: number;
  /** The provider log as read so far (appended to). */
  providerLog: { lines: ProviderLogLine[]; size: number };
}

export interface RoundResult {
  batches: number;
  calls: number;
  refused: number;
  injected: Injected[];
  violations: Violation[];
  settledMs: number;
  settled: boolean;
  /** The whole round, creates to verdict. */
  elapsedMs: number;
}

async function api(c: Cluster, method: string, path: string, body?: unknown): Promise<Response> {
  const alive = c.apis().filter((p) => p.alive);
  const p = alive[Math.floor(Math.random() * alive.length)] ?? c.apis()[0]!;
  return fetch(`${p.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${c.account.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
}

/** Sends until an API answers something other than 5xx or a broken connection (an API may be down). */
export async function persist(c: Cluster, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  // A restarted API boots slowly on a loaded machine.
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      const r = await api(c, method, path, body);
      const json = await r.json().catch(() => null);
      if (r.status < 500) return { status: r.status, json };
    } catch {
      // down: again
    }
    if (Date.now() > deadline) throw new Error(`${method} ${path}: no API answered for 180 s`);
    await sleep(200);
  }
}

async function bringRetriesDue(c: Cluster, ids: string[]): Promise<void> {
  await c.db.prisma.$executeRaw`
    UPDATE calls c SET next_attempt_at = now() FROM batches b
     WHERE b.id = c.batch_id AND c.batch_id = ANY(${ids}::text[]) AND c.status = 'queued' AND c.next_attempt_at > now()
       AND b.calling_window IS NULL`.catch(() => undefined);
}

export async function settled(c: Cluster, ids: string[]): Promise<boolean> {
  const [row] = await c.db.prisma.$queryRaw<{ open_batches: number; open_calls: number; analyses: number; hooks: number }[]>`
    SELECT (SELECT count(*)::int FROM batches WHERE id = ANY(${ids}::text[]) AND status NOT IN ('completed', 'cancelled')) AS open_batches,
           (SELECT count(*)::int FROM calls WHERE batch_id = ANY(${ids}::text[]) AND status NOT IN ('completed', 'failed', 'no_answer', 'busy', 'cancelled')) AS open_calls,
           (SELECT count(*)::int FROM calls WHERE batch_id = ANY(${ids}::text[]) AND transcript_status IN ('pending', 'processing')) AS analyses,
           (SELECT count(*)::int FROM webhook_deliveries WHERE batch_id = ANY(${ids}::text[]) AND status = 'pending') AS hooks`;
  return !!row && row.open_batches + row.open_calls + row.analyses + row.hooks === 0;
}

export async function runRound(c: Cluster, o: RoundOptions): Promise<RoundResult> {
  const began = Date.now();
  const planned = planRound(o.rng, o.round, {
    agentId: c.account.agentId,
    versionId: c.account.versionId,
    callbackUrl: c.receiverUrl,
    roundMs: o.roundMs,
    tag: o.tag,
  });
  const batches: (RoundBatch & { cancelAfterMs: number | null; hasWindow: boolean })[] = [];
  let refused = 0;
  let calls = 0;
  for (const p of planned) {
    const r = await persist(c, 'PUT', CALL_BATCHES, p.body);
    if (r.status !== 200 && r.status !== 201) {
      refused += 1;
      process.stderr.write(`round ${o.round}: create refused ${r.status} ${JSON.stringify(r.json).slice(0, 300)}\n`);
      continue;
    }
    calls += r.json.data.accepted_contacts ?? 0;
    batches.push({
      id: r.json.data.batch_id,
      maxDialsPerCall: p.maxDialsPerCall,
      maxDialsPerNumber: p.maxDialsPerNumber,
      cancelAfterMs: p.cancelAfterMs,
      hasWindow: p.hasWindow,
    });
  }
  const ids = batches.map((b) => b.id);
  const work: Promise<unknown>[] = [];
  const injected: Injected[] = [];
  for (const kind of o.faults) {
    const at = Math.round(o.rng.between(0, 0.7) * o.roundMs);
    work.push(sleep(at).then(async () => injected.push(await inject(c, kind, o.rng, o.leaseMs))));
  }
  for (const b of batches) {
    if (b.cancelAfterMs !== null) work.push(sleep(b.cancelAfterMs).then(() => persist(c, 'POST', `${CALL_BATCHES}/${b.id}/cancel`)));
  }
  let running = true;
  const due = (async () => {
    while (running) {
      await bringRetriesDue(c, ids);
      await sleep(300);
    }
  })();
  await Promise.all([...work, sleep(o.roundMs)]);
  await healAll(c);
  const healedAt = Date.now();
  let ok = false;
  let windowsCancelled = false;
  while (Date.now() - healedAt < o.settleMs) {
    if (await settled(c, ids).catch(() => false)) {
      ok = true;
      break;
    }
    // A window that closed before its calls were done keeps them waiting for the next day's: cancelled.
    if (!windowsCancelled && Date.now() - healedAt > 8_000) {
      windowsCancelled = true;
      for (const b of batches.filter((x) => x.hasWindow)) await persist(c, 'POST', `${CALL_BATCHES}/${b.id}/cancel`);
    }
    await sleep(200);
  }
  running = false;
  await due;
  // Deliveries reach the receiver a moment after their row says so.
  await sleep(300);
  const read = readProviderLog(c.providerLog, o.providerLog.size);
  o.providerLog.lines.push(...read.lines);
  o.providerLog.size = read.size;
  const violations = await check({ db: c.db, batches, provider: o.providerLog.lines, received: c.received, clockToleranceMs: o.clockToleranceMs });
  return {
    batches: batches.length,
    calls,
    refused,
    injected,
    violations,
    settledMs: Date.now() - healedAt,
    settled: ok,
    elapsedMs: Date.now() - began,
  };
}
