// Writes one pool's health decisions, each conditional on the row still being as judged (so a
// second job run, or an operator's flag in between, never rests a number twice or announces a
// change that did not happen), and queues their events in the same transaction.
import { dayAfter, type HealthDecisions, type RestDecision } from '../../domain/number-health.ts';
import type { SqlTx } from '../../db/sql-transaction.ts';
import type { NumberEvent } from './notify.ts';
import type { PoolMember } from './pool.ts';

export interface Applied {
  rested: RestDecision[];
  restored: string[];
  events: NumberEvent[];
}

const REST_SQL = `
UPDATE did_numbers SET rested_until = $2::timestamptz, rest_reason = $3, judged_from = $4::date
 WHERE id = $1 AND (rested_until IS NULL OR rested_until <= $5::timestamptz) RETURNING id`;
const RESTORE_SQL = `
UPDATE did_numbers SET rested_until = NULL, rest_reason = NULL
 WHERE id = $1 AND NOT flagged AND rested_until <= $2::timestamptz RETURNING id`;
const EXTEND_SQL = `UPDATE did_numbers SET rested_until = $2::timestamptz WHERE id = $1 AND flagged`;

const round = (v: number | null) => (v === null ? null : Math.round(v * 10_000) / 10_000);

function numberData(m: PoolMember) {
  return { id: m.id, number: m.number, area_code: m.areaCode, region: m.region };
}

function restedEvent(m: PoolMember, r: RestDecision): NumberEvent {
  return {
    type: 'number.rested',
    data: {
      number: numberData(m),
      reason: r.reason,
      rested_until: r.until.toISOString(),
      dials: r.stats.dials,
      answer_rate: round(r.stats.answerRate),
      short_call_rate: round(r.stats.shortCallRate),
      pool_median_answer_rate: round(r.poolMedian),
    },
  };
}

export async function applyDecisions(tx: SqlTx, pool: PoolMember[], d: HealthDecisions, now: Date): Promise<Applied> {
  const byId = new Map(pool.map((m) => [m.id, m]));
  const out: Applied = { rested: [], restored: [], events: [] };
  for (const r of d.rest) {
    const rows = await tx.query(REST_SQL, [r.id, r.until.toISOString(), r.reason, dayAfter(now), now.toISOString()]);
    if (rows.length === 0) continue;
    out.rested.push(r);
    out.events.push(restedEvent(byId.get(r.id)!, r));
  }
  for (const id of d.restore) {
    const rows = await tx.query(RESTORE_SQL, [id, now.toISOString()]);
    if (rows.length === 0) continue;
    out.restored.push(id);
    out.events.push({ type: 'number.restored', data: { number: numberData(byId.get(id)!), restored_at: now.toISOString() } });
  }
  for (const e of d.extend) await tx.query(EXTEND_SQL, [e.id, e.until.toISOString()]);
  return out;
}
