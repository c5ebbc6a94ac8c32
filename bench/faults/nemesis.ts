// The nemesis: one fault at a time per call to `inject`, against one process of the cluster (or
// the provider), held for a drawn time and then healed. Kinds:
//   pause               SIGSTOP a worker for 0.5-3 x LEASE_MS, then SIGCONT
//   kill                SIGKILL a worker (or, one time in four, an API while another is up), restarted 0.2-1 s later
//   partition_db        a worker's link to PostgreSQL cut for 0.5-3 x LEASE_MS (healed by resuming
//                       the held bytes or resetting the connections)
//   partition_provider  a worker's link to the provider cut the same way
//   pg_kill             pg_terminate_backend of every connection of one process (by application_name)
//   provider_slow       the provider answers every request 1-4 s late, for 1-4 s
//   provider_fail       the provider refuses creates (half after making the call) and lookups, 0.5-2 s
//   clock_step          a worker's clock steps ±0.1-0.4 x LEASE_MS (libfaketime), back after 1-3 s
import type { Cluster, Proc } from './cluster.ts';
import type { Rng } from './scenario.ts';

export const FAULT_KINDS = [
  'pause',
  'kill',
  'partition_db',
  'partition_provider',
  'pg_kill',
  'provider_slow',
  'provider_fail',
  'clock_step',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface Injected {
  kind: FaultKind;
  target: string;
  /** How long the fault was held (ms). */
  heldMs: number;
  note?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What a deterministic test fixes instead of drawing it: the process, how long, how a partition heals, the clock's step. */
export interface FaultChoice {
  target?: Proc;
  heldMs?: number;
  heal?: 'resume' | 'reset';
  offsetMs?: number;
}

/** Injects one fault now and heals it; resolves once healed. */
export async function inject(c: Cluster, kind: FaultKind, r: Rng, leaseMs: number, fixed: FaultChoice = {}): Promise<Injected> {
  const worker = (): Proc => fixed.target ?? r.pick(c.workers().filter((w) => w.alive && !w.paused));
  const held = (lo: number, hi: number) => fixed.heldMs ?? Math.round(r.between(lo, hi));
  switch (kind) {
    case 'pause': {
      const w = worker();
      const ms = held(0.5 * leaseMs, 3 * leaseMs);
      w.paused = true;
      w.child.kill('SIGSTOP');
      await sleep(ms);
      if (w.alive) w.child.kill('SIGCONT');
      w.paused = false;
      return { kind, target: w.name, heldMs: ms };
    }
    case 'kill': {
      // An API only while another one is up: the campaign's own requests need one.
      const apis = c.apis().filter((a) => a.alive);
      const p = fixed.target ?? (apis.length > 1 && r.chance(0.25) ? r.pick(apis) : worker());
      const name = p.name;
      const ms = held(200, 1_000);
      p.child.kill('SIGKILL');
      await sleep(ms);
      await c.restart(p);
      return { kind, target: name, heldMs: ms, note: `restarted as ${p.name}` };
    }
    case 'partition_db':
    case 'partition_provider': {
      const w = worker();
      const link = kind === 'partition_db' ? w.db : w.provider;
      const ms = held(0.5 * leaseMs, 3 * leaseMs);
      const how = fixed.heal ?? (r.chance(0.5) ? 'resume' : 'reset');
      link.partition();
      await sleep(ms);
      link.heal(how);
      return { kind, target: w.name, heldMs: ms, note: `healed by ${how}` };
    }
    case 'pg_kill': {
      const p = fixed.target ?? (r.chance(0.75) ? worker() : r.pick(c.apis()));
      const killed = await c.db.prisma.$queryRaw<{ n: number }[]>`
        SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = ${p.name}`;
      return { kind, target: p.name, heldMs: 0, note: `${killed[0]?.n ?? 0} connections` };
    }
    case 'provider_slow':
    case 'provider_fail': {
      const ms = kind === 'provider_slow' ? held(1_000, 4_000) : held(500, 2_000);
      await c.setProviderMode(kind === 'provider_slow' ? 'slow' : 'failing');
      await sleep(ms);
      await c.setProviderMode('normal');
      return { kind, target: 'provider', heldMs: ms };
    }
    case 'clock_step': {
      const w = worker();
      if (!w.clockFile) return { kind, target: w.name, heldMs: 0, note: 'skipped: libfaketime not installed' };
      const offset = fixed.offsetMs ?? Math.round((r.chance(0.5) ? 1 : -1) * r.between(0.1, 0.4) * leaseMs);
      const ms = held(1_000, 3_000);
      c.stepClock(w, offset);
      await sleep(ms);
      c.stepClock(w, 0);
      return { kind, target: w.name, heldMs: ms, note: `${offset > 0 ? '+' : ''}${offset} ms` };
    }
  }
}

/** Whatever a fault left behind (an aborted round): every process running, every link whole, the provider normal. */
export async function healAll(c: Cluster): Promise<void> {
  await c.setProviderMode('normal');
  for (const p of c.procs) {
    p.db.heal('resume');
    p.provider.heal('resume');
    if (p.paused && p.alive) p.child.kill('SIGCONT');
    p.paused = false;
    c.stepClock(p, 0);
    if (!p.alive) await c.restart(p);
  }
}
