// What the campaign prints: one line a round, then the totals: rounds, calls, faults injected by
// kind, violations by invariant beside their bound (0), and the first violations in full.
import { INVARIANTS, type Invariant, type Violation } from './checker.ts';
import { FAULT_KINDS, type FaultKind, type Injected } from './nemesis.ts';
import type { RoundResult } from './round.ts';

export interface Totals {
  rounds: number;
  calls: number;
  refused: number;
  unsettled: number;
  /** Rounds the harness could not drive to the end (not judged). */
  aborted: number;
  faults: Record<FaultKind, number>;
  violations: Record<Invariant, number>;
  examples: { round: number; v: Violation }[];
  startedAt: number;
}

export function newTotals(): Totals {
  return {
    rounds: 0,
    calls: 0,
    refused: 0,
    unsettled: 0,
    aborted: 0,
    faults: Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>,
    violations: Object.fromEntries(Object.keys(INVARIANTS).map((k) => [k, 0])) as Record<Invariant, number>,
    examples: [],
    startedAt: Date.now(),
  };
}

const describe = (f: Injected) => `${f.kind}(${f.target}${f.heldMs ? ` ${f.heldMs}ms` : ''}${f.note ? ` ${f.note}` : ''})`;

export function addRound(t: Totals, round: number, r: RoundResult): string {
  t.rounds += 1;
  t.calls += r.calls;
  t.refused += r.refused;
  if (!r.settled) t.unsettled += 1;
  for (const f of r.injected) if (!f.note?.startsWith('skipped')) t.faults[f.kind] += 1;
  for (const v of r.violations) {
    t.violations[v.invariant] += 1;
    if (t.examples.length < 40) t.examples.push({ round, v });
  }
  const lines = [
    `round ${round}: ${r.batches} batches, ${r.calls} calls; faults ${r.injected.map(describe).join(', ') || 'none'}; settled ${r.settled ? 'in' : 'NOT in'} ${(r.settledMs / 1000).toFixed(1)} s (round ${(r.elapsedMs / 1000).toFixed(1)} s); violations ${r.violations.length}`,
  ];
  for (const v of r.violations.slice(0, 10)) lines.push(`  ${v.invariant}: ${v.detail}`);
  return lines.join('\n');
}

export function summary(t: Totals, seed: number): string {
  const out = [
    '',
    `fault campaign: seed ${seed}, ${t.rounds} rounds in ${((Date.now() - t.startedAt) / 60_000).toFixed(1)} min, ${t.calls} calls accepted (${t.refused} creates refused), ${t.unsettled} rounds not settled in time, ${t.aborted} aborted by the harness`,
    'faults injected:',
    ...Object.entries(t.faults).map(([k, n]) => `  ${k.padEnd(20)} ${n}`),
    'violations (bound 0):',
    ...Object.entries(t.violations).map(([k, n]) => `  ${k.padEnd(17)} ${String(n).padStart(5)}  (bound 0)  ${INVARIANTS[k as Invariant]}`),
  ];
  if (t.examples.length > 0) {
    out.push('first violations:');
    for (const e of t.examples) out.push(`  round ${e.round} ${e.v.invariant}: ${e.v.detail}`);
  }
  return out.join('\n');
}

export const violationCount = (t: Totals) => Object.values(t.violations).reduce((a, b) => a + b, 0);
