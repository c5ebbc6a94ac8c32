// Number health of caller-ID numbers (docs/campaigns.md "Number health"): per number, rolling
// answer and short-call rates from its daily counts, and which numbers of a pool to rest (a low
// answer rate against the pool's median, or flagged) or bring back (their rest ran out). Pure: the
// counts are kept by the worker's attempt-end writes and the periodic job applies the decisions
// (src/services/number-health/).

/** One UTC day of one number: attempts that ended, of them answered, and answered but short. */
export interface DailyCounts {
  /** YYYY-MM-DD (UTC). */
  day: string;
  dials: number;
  answered: number;
  shortCalls: number;
}

export interface RollingStats {
  dials: number;
  answered: number;
  shortCalls: number;
  /** answered / dials; null without dials. */
  answerRate: number | null;
  /** shortCalls / answered; null without an answered call. */
  shortCallRate: number | null;
}

export interface HealthSettings {
  /** Days in the rolling window, today included. */
  windowDays: number;
  /** A number with fewer dials in its judged days is not judged (3 dials say nothing). */
  minDials: number;
  /** Rested when its answer rate is below this fraction of the pool's median. */
  threshold: number;
  /** How long a rest lasts. */
  restMs: number;
}

export type RestReason = 'low_answer_rate' | 'flagged';

/** A pool member as the job sees it. */
export interface PoolNumber {
  id: string;
  days: DailyCounts[];
  flagged: boolean;
  restedUntil: Date | null;
  /** First UTC day its calls are judged on (the day after its last rest began); null: all. */
  judgedFrom: string | null;
}

export interface RestDecision {
  id: string;
  reason: RestReason;
  until: Date;
  stats: RollingStats;
  /** The pool median it was compared against (null for a flagged number). */
  poolMedian: number | null;
}

export interface HealthDecisions {
  rest: RestDecision[];
  /** Rest ran out and not flagged: available again. */
  restore: string[];
  /** Flagged and already rested: the rest is extended to this time (no new event). */
  extend: { id: string; until: Date }[];
}

const DAY_MS = 86_400_000;

/** The UTC day of an instant, YYYY-MM-DD. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** The first day of a window of `windowDays` days ending with the day of `now`. */
export function windowStart(now: Date, windowDays: number): string {
  return utcDay(new Date(now.getTime() - (windowDays - 1) * DAY_MS));
}

/** The day after the day of `at`: a rested number is judged again only on calls from then on. */
export function dayAfter(at: Date): string {
  return utcDay(new Date(at.getTime() + DAY_MS));
}

/** Sums the days from `from` on (inclusive; ISO days compare as strings). */
export function rollingStats(days: readonly DailyCounts[], from: string): RollingStats {
  let dials = 0;
  let answered = 0;
  let shortCalls = 0;
  for (const d of days) {
    if (d.day < from) continue;
    dials += d.dials;
    answered += d.answered;
    shortCalls += d.shortCalls;
  }
  return {
    dials,
    answered,
    shortCalls,
    answerRate: dials > 0 ? answered / dials : null,
    shortCallRate: answered > 0 ? shortCalls / answered : null,
  };
}

/** The median of the values; null for none. */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** A call is short when answered and talked for less than `shortSeconds`. */
export function isShortCall(answered: boolean, answerSeconds: number | null, shortSeconds: number): boolean {
  return answered && answerSeconds !== null && answerSeconds < shortSeconds;
}

function judgedStats(n: PoolNumber, now: Date, s: HealthSettings): RollingStats {
  const start = windowStart(now, s.windowDays);
  return rollingStats(n.days, n.judgedFrom && n.judgedFrom > start ? n.judgedFrom : start);
}

const isRested = (n: PoolNumber, now: Date) => n.restedUntil !== null && n.restedUntil > now;

/**
 * What to do with one account's pool at `now`. Flagged numbers are rested whatever it leaves; a
 * low answer rate rests a number only while another number of the pool stays available (worst
 * first), so a pool never loses its last number to a rate: its calls keep being placed.
 */
export function decidePool(pool: readonly PoolNumber[], now: Date, s: HealthSettings): HealthDecisions {
  const until = new Date(now.getTime() + s.restMs);
  const out: HealthDecisions = { rest: [], restore: [], extend: [] };
  const stats = new Map(pool.map((n) => [n.id, judgedStats(n, now, s)]));
  let available = 0;
  for (const n of pool) {
    if (n.flagged) {
      if (isRested(n, now)) out.extend.push({ id: n.id, until });
      else out.rest.push({ id: n.id, reason: 'flagged', until, stats: stats.get(n.id)!, poolMedian: null });
    } else if (isRested(n, now)) {
      continue;
    } else {
      if (n.restedUntil !== null) out.restore.push(n.id);
      available++;
    }
  }
  const judged = pool.filter((n) => stats.get(n.id)!.dials >= s.minDials && stats.get(n.id)!.answerRate !== null);
  const poolMedian = median(judged.map((n) => stats.get(n.id)!.answerRate!));
  if (poolMedian === null) return out;
  const low = judged
    .filter((n) => !n.flagged && !isRested(n, now) && stats.get(n.id)!.answerRate! < s.threshold * poolMedian)
    .sort((a, b) => stats.get(a.id)!.answerRate! - stats.get(b.id)!.answerRate! || (a.id < b.id ? -1 : 1));
  for (const n of low) {
    if (available <= 1) break;
    available--;
    out.restore = out.restore.filter((id) => id !== n.id);
    out.rest.push({ id: n.id, reason: 'low_answer_rate', until, stats: stats.get(n.id)!, poolMedian });
  }
  return out;
}
