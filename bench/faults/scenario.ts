// A round's workload, drawn from the campaign's seeded random source: a few batches of short calls
// (the fake provider plays them out by the number's last digit: 0 no answer, 1 busy, 2 failed, 3-9
// answered), some with a retry policy, alternate numbers, a calling window open now (closing within
// minutes), a cancellation at a random moment. Every number is used by one contact of the round only,
// so what the checker allows a number is its call's policy.

/** mulberry32: a small seeded generator, so a seed replays the same campaign. */
export function rng(seed: number): Rng {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (xs) => xs[Math.floor(next() * xs.length)]!,
    chance: (p) => next() < p,
    between: (lo, hi) => lo + next() * (hi - lo),
  };
}

export interface Rng {
  next(): number;
  int(lo: number, hi: number): number;
  pick<T>(xs: readonly T[]): T;
  chance(p: number): boolean;
  between(lo: number, hi: number): number;
}

export interface PlannedBatch {
  key: string;
  body: Record<string, unknown>;
  /** Dials a call of this batch may make at most (its policy's max_attempts; else 1, or 2 with an alternate). */
  maxDialsPerCall: number;
  /** Dials of one number at most (its policy's max_attempts, else 1). */
  maxDialsPerNumber: number;
  /** Cancelled this long after the round starts (null: never). */
  cancelAfterMs: number | null;
  hasWindow: boolean;
}

/** A valid US number whose last digit is `digit`, unique for (round, index) over 10,000 rounds. */
function number(round: number, index: number, digit: number): string {
  const n = ((round % 10_000) * 50 + index) % 500_000;
  return `+1415${String(5_000_000 + n * 10 + digit).padStart(7, '0')}`;
}

/** "HH:MM" of `d` in Los Angeles (the zone of +1 415 numbers). */
function laTime(d: Date): { h: number; m: number } {
  const [h, m] = new Intl.DateTimeFormat('en-GB', { timeZone: 'America/Los_Angeles', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
    .format(d)
    .split(':')
    .map(Number);
  return { h: h!, m: m! };
}
const hhmm = (mins: number) => `${String(Math.floor(mins / 60)).padStart(2, '0')}:${String(mins % 60).padStart(2, '0')}`;

export function planRound(
  r: Rng,
  round: number,
  o: { agentId: string; versionId: string; callbackUrl: string; roundMs: number; tag: string },
): PlannedBatch[] {
  const batches: PlannedBatch[] = [];
  let index = 0;
  const count = r.int(2, 4);
  for (let b = 0; b < count; b++) {
    const contacts: Record<string, unknown>[] = [];
    const useAlternate = r.chance(0.4);
    const retry = r.chance(0.5) ? { max_attempts: r.int(2, 3), on: ['no_answer', 'busy', 'failed'], delay_seconds: 60 } : null;
    for (let i = 0, n = r.int(4, 12); i < n; i++) {
      // Mostly answered, so that the faults meet live conversations.
      const digit = r.chance(0.6) ? r.int(3, 9) : r.int(0, 2);
      const metadata: Record<string, unknown> = {};
      if (useAlternate && r.chance(0.6)) metadata.alternate_number = number(round, index++, r.int(0, 9));
      contacts.push({ contact_id: `r${round}b${b}c${i}`, phone_number: number(round, index++, digit), metadata });
    }
    // A window open now in the numbers' zone, closing at the next minute boundary or a few after.
    let window: Record<string, unknown> | null = null;
    if (r.chance(0.25)) {
      const now = laTime(new Date());
      const at = now.h * 60 + now.m;
      const end = at + r.int(1, 3);
      if (end < 24 * 60) window = { start: hhmm(Math.max(0, at - 60)), end: hhmm(end), timezone: 'recipient' };
    }
    const body: Record<string, unknown> = {
      idempotency_key: `${o.tag}-r${round}-b${b}`,
      agent_id: o.agentId,
      version_id: o.versionId,
      interruption: true,
      use_alternate_number: useAlternate,
      start_mode: 'immediate',
      schedule_date: '2030-01-15',
      schedule_time: '09:30',
      schedule_timezone: 'America/New_York',
      concurrency: r.int(2, 6),
      callback_url: o.callbackUrl,
      contacts,
      ...(retry ? { retry } : {}),
      ...(window ? { calling_window: window } : {}),
    };
    batches.push({
      key: body.idempotency_key as string,
      body,
      maxDialsPerCall: retry?.max_attempts ?? (useAlternate ? 2 : 1),
      maxDialsPerNumber: retry?.max_attempts ?? 1,
      cancelAfterMs: r.chance(0.2) ? Math.round(r.between(0.1, 0.9) * o.roundMs) : null,
      hasWindow: window !== null,
    });
  }
  return batches;
}
