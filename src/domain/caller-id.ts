// Caller-ID pools and local presence (docs/campaigns.md "Caller-ID pools and local presence"):
// which of an account's DID numbers a call is placed from. Pure: the worker reads the pool and
// today's dial counts, this decides, the worker records the choice and counts it under the cap.
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { STATE_OF_AREA_CODE } from './compliance/area-code-states.ts';

/** Highest per-number daily cap accepted (did_numbers CHECK). */
export const MAX_DID_DAILY_CAP = 100_000;

/** Where a number is local: its NANP area code (null outside +1) and its region ('US-NY', else its ISO country). */
export interface Locality {
  areaCode: string | null;
  region: string | null;
}

const NANP = /^\+1([2-9]\d{2})[2-9]\d{6}$/;

/** The locality of an E.164 number: a US area code names its state; anything else its country (null: unknown). */
export function localityOf(e164: string): Locality {
  const areaCode = NANP.exec(e164)?.[1] ?? null;
  const state = areaCode ? STATE_OF_AREA_CODE.get(areaCode) : undefined;
  if (state) return { areaCode, region: `US-${state}` };
  const country = parsePhoneNumberFromString(e164)?.country ?? null;
  return { areaCode, region: country };
}

export interface PoolNumber {
  id: string;
  number: string;
  areaCode: string | null;
  region: string | null;
  /** Most dials per day; null: no cap. */
  dailyCap: number | null;
  isDefault: boolean;
}

/** How the number was chosen: by locality, best first, or the batch's own DID. */
export const CALLER_ID_MATCHES = ['area_code', 'region', 'default', 'any', 'batch'] as const;
export type CallerIdMatch = (typeof CALLER_ID_MATCHES)[number];

export interface CallerIdChoice {
  number: PoolNumber;
  match: CallerIdMatch;
}

/**
 * The pool's default: the one marked so, else the first (the pool is given oldest first).
 */
export function poolDefault(pool: readonly PoolNumber[]): PoolNumber | null {
  return pool.find((n) => n.isDefault) ?? pool[0] ?? null;
}

/** Dials left today for a number (Infinity without a cap). */
export function dialsLeft(n: PoolNumber, dialsToday: ReadonlyMap<string, number>): number {
  return n.dailyCap === null ? Number.POSITIVE_INFINITY : n.dailyCap - (dialsToday.get(n.id) ?? 0);
}

/**
 * The caller ID for a call to `to`: among the pool's available numbers (not in `unavailable`,
 * under their daily cap), the same area code, else the same region, else the pool default, else
 * any; among equally good numbers the least dialled today, then the oldest (so a day's dials
 * round-robin across them). null: every number is capped or unavailable.
 */
export function chooseCallerId(
  pool: readonly PoolNumber[],
  to: string,
  dialsToday: ReadonlyMap<string, number>,
  unavailable: ReadonlySet<string> = new Set(),
): CallerIdChoice | null {
  const open = pool.filter((n) => !unavailable.has(n.id) && dialsLeft(n, dialsToday) > 0);
  if (open.length === 0) return null;
  const { areaCode, region } = localityOf(to);
  const pick = (match: CallerIdMatch, among: PoolNumber[]): CallerIdChoice | null =>
    among.length === 0 ? null : { number: leastDialled(among, dialsToday), match };
  const fallback = poolDefault(pool);
  return (
    (areaCode !== null
      ? pick(
          'area_code',
          open.filter((n) => n.areaCode === areaCode),
        )
      : null) ??
    (region !== null
      ? pick(
          'region',
          open.filter((n) => n.region === region),
        )
      : null) ??
    pick(
      'default',
      open.filter((n) => n === fallback),
    ) ??
    pick('any', open)
  );
}

function leastDialled(among: readonly PoolNumber[], dialsToday: ReadonlyMap<string, number>): PoolNumber {
  let best = among[0];
  for (const n of among) if ((dialsToday.get(n.id) ?? 0) < (dialsToday.get(best.id) ?? 0)) best = n;
  return best;
}

export interface CallerIdRequest {
  to: string;
  /** The batch's own DID: the only number it dials from (its cap applies). */
  fixedDidId: string | null;
}

/**
 * Chooses for several calls in order, each choice counted before the next (`dialsToday` is not
 * changed; the counts of this round are returned). A call whose batch has its own DID gets that
 * number while it is under its cap and available, else nothing.
 */
export function chooseCallerIds(
  pool: readonly PoolNumber[],
  requests: readonly CallerIdRequest[],
  dialsToday: ReadonlyMap<string, number>,
  unavailable: ReadonlySet<string> = new Set(),
): { choices: (CallerIdChoice | null)[]; dials: Map<string, number> } {
  const counts = new Map(dialsToday);
  const dials = new Map<string, number>();
  const choices = requests.map((r) => {
    const choice = r.fixedDidId !== null ? fixedChoice(pool, r.fixedDidId, counts, unavailable) : chooseCallerId(pool, r.to, counts, unavailable);
    if (choice) {
      counts.set(choice.number.id, (counts.get(choice.number.id) ?? 0) + 1);
      dials.set(choice.number.id, (dials.get(choice.number.id) ?? 0) + 1);
    }
    return choice;
  });
  return { choices, dials };
}

function fixedChoice(
  pool: readonly PoolNumber[],
  didId: string,
  counts: ReadonlyMap<string, number>,
  unavailable: ReadonlySet<string>,
): CallerIdChoice | null {
  const n = pool.find((p) => p.id === didId);
  return n && !unavailable.has(n.id) && dialsLeft(n, counts) > 0 ? { number: n, match: 'batch' } : null;
}

/** The start of the next UTC day: when the daily caps reset. */
export function nextCapDay(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
}

/** The UTC day a dial at `now` counts in, as YYYY-MM-DD. */
export function capDay(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/** calls.wait_reason of a call no number may dial from now (every usable one capped today, or resting). */
export const CALLER_ID_CAP_WAIT_REASON = 'caller_id_cap';

/** How long a call waits when the only numbers it could use are unavailable (rested), not capped. */
export const CALLER_ID_RECHECK_MS = 15 * 60_000;

/**
 * When a call that got no number tries again: the next UTC day when capped numbers are all that
 * stand in its way (caps reset then), sooner when an unavailable (rested) number could come back.
 */
export function callerIdWaitUntil(pool: readonly PoolNumber[], request: CallerIdRequest, unavailable: ReadonlySet<string>, now: Date): Date {
  const candidates = request.fixedDidId !== null ? pool.filter((n) => n.id === request.fixedDidId) : pool;
  const rested = candidates.some((n) => unavailable.has(n.id));
  const tomorrow = nextCapDay(now);
  return rested ? new Date(Math.min(tomorrow.getTime(), now.getTime() + CALLER_ID_RECHECK_MS)) : tomorrow;
}
