// Caller-ID pools and local presence (domain/caller-id.ts): the locality of a number, the choice
// rule (area code, region, default, any; least dialled among equals; caps; unavailable numbers),
// and the check: 10,000 contacts over 50 area codes and a pool of 60 numbers through a
// simulated day - every call that can be matched is, and no number passes its cap.
import { describe, expect, it } from 'vitest';
import {
  callerIdWaitUntil,
  chooseCallerId,
  chooseCallerIds,
  localityOf,
  nextCapDay,
  poolDefault,
  type CallerIdChoice,
  type PoolNumber,
} from '../../src/domain/caller-id.ts';
import { AREA_CODES_BY_STATE } from '../../src/domain/compliance/area-code-states.ts';

let seq = 0;
function did(number: string, o: Partial<PoolNumber> = {}): PoolNumber {
  return { id: `did_${String(++seq).padStart(4, '0')}`, number, ...localityOf(number), dailyCap: null, isDefault: false, ...o };
}
const line = (areaCode: string, n: number) => `+1${areaCode}555${String(n).padStart(4, '0')}`;

describe('localityOf', () => {
  it('names a US number by its area code and state, a Canadian one by its country, and a non-NANP one by its country only', () => {
    expect(localityOf('+12125550100')).toEqual({ areaCode: '212', region: 'US-NY' });
    expect(localityOf('+14155550100')).toEqual({ areaCode: '415', region: 'US-CA' });
    expect(localityOf('+14165550100')).toEqual({ areaCode: '416', region: 'CA' });
    expect(localityOf('+442071234567')).toEqual({ areaCode: null, region: 'GB' });
  });
});

describe('chooseCallerId', () => {
  const ny1 = did('+12125550001');
  const ny2 = did('+12125550002');
  const buffalo = did('+17165550001');
  const austin = did('+15125550001', { isDefault: true });
  const oldest = did('+13055550001');
  const pool = [oldest, ny1, ny2, buffalo, austin];
  const none = new Map<string, number>();

  it('takes the same area code first, the least dialled of equals, the oldest on a tie', () => {
    expect(chooseCallerId(pool, '+12125559999', none)).toEqual({ number: ny1, match: 'area_code' });
    expect(chooseCallerId(pool, '+12125559999', new Map([[ny1.id, 3]]))).toEqual({ number: ny2, match: 'area_code' });
  });

  it('then the same state, then the marked default, then any number', () => {
    expect(chooseCallerId(pool, '+13475559999', none)).toEqual({ number: ny1, match: 'region' });
    expect(chooseCallerId(pool, '+16175559999', none)).toEqual({ number: austin, match: 'default' });
    const capped = pool.map((n) => (n === austin ? { ...n, dailyCap: 2 } : n));
    expect(chooseCallerId(capped, '+16175559999', new Map([[austin.id, 2]]))).toEqual({ number: oldest, match: 'any' });
  });

  it('never takes a number at its cap or an unavailable one; none left: null', () => {
    const capped = pool.map((n) => ({ ...n, dailyCap: 1 }));
    const used = new Map([[ny1.id, 1]]);
    expect(chooseCallerId(capped, '+12125559999', used, new Set([ny2.id]))?.number.id).toBe(buffalo.id);
    const all = new Map(pool.map((n) => [n.id, 1]));
    expect(chooseCallerId(capped, '+12125559999', all)).toBeNull();
    expect(chooseCallerId(pool, '+12125559999', none, new Set(pool.map((n) => n.id)))).toBeNull();
  });

  it('the default is the marked number, else the oldest', () => {
    expect(poolDefault(pool)).toBe(austin);
    expect(poolDefault([oldest, ny1])).toBe(oldest);
    expect(poolDefault([])).toBeNull();
  });
});

describe('chooseCallerIds', () => {
  it('counts each choice before the next, and a batch with its own DID dials only from it while under its cap', () => {
    const a = did('+12125550011', { dailyCap: 2 });
    const b = did('+12125550012', { dailyCap: 2 });
    const to = '+12125559999';
    const r = chooseCallerIds(
      [a, b],
      [0, 1, 2, 3, 4].map(() => ({ to, fixedDidId: null })),
      new Map(),
    );
    expect(r.choices.map((c) => c?.number.id ?? null)).toEqual([a.id, b.id, a.id, b.id, null]);
    expect(r.dials).toEqual(
      new Map([
        [a.id, 2],
        [b.id, 2],
      ]),
    );
    const fixed = chooseCallerIds(
      [a, b],
      [0, 1, 2].map(() => ({ to: '+13055550000', fixedDidId: b.id })),
      new Map([[b.id, 1]]),
    );
    expect(fixed.choices.map((c) => c && [c.number.id, c.match])).toEqual([[b.id, 'batch'], null, null]);
  });
});

describe('when a call with no number tries again', () => {
  const now = new Date('2026-11-30T22:10:00Z');
  it('at the next UTC day when caps are all that stop it, within 15 minutes when a number is resting', () => {
    const a = did('+12125550021', { dailyCap: 1 });
    expect(nextCapDay(now).toISOString()).toBe('2026-12-01T00:00:00.000Z');
    expect(callerIdWaitUntil([a], { to: '+12125550000', fixedDidId: null }, new Set(), now).toISOString()).toBe('2026-12-01T00:00:00.000Z');
    expect(callerIdWaitUntil([a], { to: '+12125550000', fixedDidId: null }, new Set([a.id]), now).toISOString()).toBe('2026-11-30T22:25:00.000Z');
  });
});

describe('local presence over a day: 10,000 contacts, 50 area codes, a pool of 60 numbers', () => {
  // 50 area codes of states with at least two (so a state can match when the area code cannot).
  const states = Object.entries(AREA_CODES_BY_STATE).filter(([, codes]) => codes.length >= 3);
  const contactCodes = states.flatMap(([, codes]) => codes.slice(0, 2)).slice(0, 50);
  const stateOf = (code: string) => localityOf(line(code, 0)).region;

  // 50 local numbers: one in each of the first 45 area codes, a second in 5 of them; capped.
  const local = [
    ...contactCodes.slice(0, 45).map((c) => did(line(c, 1), { dailyCap: 120 })),
    ...contactCodes.slice(0, 5).map((c) => did(line(c, 2), { dailyCap: 120 })),
  ];
  // 10 elsewhere: 5 in the states of the last 5 area codes (another area code there), 5 in states no contact is in; one is the default.
  const sameState = contactCodes.slice(45).map((c) => {
    const other = states.find(([s]) => `US-${s}` === stateOf(c))![1].find((x) => !contactCodes.includes(x))!;
    return did(line(other, 3), { dailyCap: 300 });
  });
  const contactStates = new Set(contactCodes.map(stateOf));
  const farCodes = Object.entries(AREA_CODES_BY_STATE)
    .filter(([s]) => !contactStates.has(`US-${s}`))
    .map(([, codes]) => codes[0])
    .slice(0, 5);
  const far = farCodes.map((c, i) => did(line(c, 4), { dailyCap: 300, isDefault: i === 2 }));
  const pool = [...far, ...local, ...sameState];
  // One number rests all day: never chosen.
  const unavailable = new Set([local[7].id]);

  it('matches every call that can be matched, spreads equals, and keeps every number within its cap', () => {
    expect(new Set(contactCodes).size).toBe(50);
    expect(pool).toHaveLength(60);
    const contacts = Array.from({ length: 10_000 }, (_, i) => line(contactCodes[i % 50], 5000 + Math.floor(i / 50)));
    const counts = new Map<string, number>();
    const open = (n: PoolNumber) => !unavailable.has(n.id) && (n.dailyCap === null || (counts.get(n.id) ?? 0) < n.dailyCap);
    const matches = new Map<string, number>();
    let waiting = 0;
    for (const to of contacts) {
      const { areaCode, region } = localityOf(to);
      const sameCode = pool.filter((n) => open(n) && n.areaCode === areaCode);
      const sameRegion = pool.filter((n) => open(n) && n.region === region);
      const choice: CallerIdChoice | null = chooseCallerId(pool, to, counts, unavailable);
      if (sameCode.length > 0) {
        expect(choice?.match).toBe('area_code');
        expect(sameCode).toContain(choice!.number);
        // The least dialled of the equally good numbers.
        expect(counts.get(choice!.number.id) ?? 0).toBe(Math.min(...sameCode.map((n) => counts.get(n.id) ?? 0)));
      } else if (sameRegion.length > 0) {
        expect(choice?.match).toBe('region');
        expect(sameRegion).toContain(choice!.number);
      } else if (pool.some(open)) {
        expect(choice?.match).toBe(open(poolDefault(pool)!) ? 'default' : 'any');
      } else {
        expect(choice).toBeNull();
      }
      if (!choice) {
        waiting += 1;
        continue;
      }
      expect(unavailable.has(choice.number.id)).toBe(false);
      counts.set(choice.number.id, (counts.get(choice.number.id) ?? 0) + 1);
      matches.set(choice.match, (matches.get(choice.match) ?? 0) + 1);
    }
    for (const n of pool) expect(counts.get(n.id) ?? 0).toBeLessThanOrEqual(n.dailyCap ?? Infinity);
    // Capacity: 49 usable local numbers x 120 + 10 x 300 = 8,880 dials; the rest wait for tomorrow.
    expect(waiting).toBe(10_000 - 8_880);
    expect(matches.get('area_code')).toBeGreaterThan(4_000);
    expect(matches.get('region')).toBeGreaterThan(0);
    expect(matches.get('default')).toBeGreaterThan(0);
    expect(matches.get('any')).toBeGreaterThan(0);
    // Two numbers in one area code share its calls evenly.
    expect(counts.get(local[0].id)).toBe(counts.get(local[45].id));
  });
});
