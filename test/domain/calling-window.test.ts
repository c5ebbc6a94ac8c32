import { DateTime, IANAZone } from 'luxon';
import { describe, expect, it } from 'vitest';
import {
  callingWindowProblems,
  isOpenAt,
  nextOpening,
  normalizeWindow,
  openIntervals,
  OPENING_HORIZON_DAYS,
  storedWindow,
  WEEKDAYS,
  type CallingWindow,
  type Interval,
} from '../../src/domain/calling-window.ts';
import { computeScheduledAt } from '../../src/domain/schedule.ts';
import { NO_ZONE_MESSAGE, openingsOf, placeInWindows, replaceWaitingCall, type WaitingCall } from '../../src/domain/call-windows.ts';
import { zonesForNumber } from '../../src/domain/number-zones.ts';
import { numberZoneTable } from '../../src/services/batches/number-zone-table.ts';
import { retryInWindow } from '../../src/domain/retry-policy.ts';
import type { NormalizedContact } from '../../src/domain/contacts.ts';

const w = (start: string, end: string, timezone = 'recipient', days?: string[]): CallingWindow => normalizeWindow({ start, end, timezone, days });
const at = (iso: string) => new Date(iso);
const opening = (o: ReturnType<typeof nextOpening>) => o && { opensAt: o.opensAt.toISOString(), closesAt: o.closesAt.toISOString() };

describe('nextOpening', () => {
  it('is the window itself, in the zone, when it is open now', () => {
    expect(opening(nextOpening([w('09:00', '20:00')], ['America/New_York'], at('2026-03-04T15:00:00Z')))).toEqual({
      opensAt: '2026-03-04T15:00:00.000Z',
      closesAt: '2026-03-05T01:00:00.000Z',
    });
  });

  it('follows DST: 09:00 New York is 14:00Z before the change and 13:00Z after it (2026-03-08)', () => {
    // Saturday evening before the change: Sunday opens at 09:00 EDT.
    expect(opening(nextOpening([w('09:00', '20:00')], ['America/New_York'], at('2026-03-08T02:00:00Z')))).toEqual({
      opensAt: '2026-03-08T13:00:00.000Z',
      closesAt: '2026-03-09T00:00:00.000Z',
    });
    // Back to standard time on 2026-11-01: that Sunday opens at 14:00Z.
    expect(nextOpening([w('09:00', '20:00')], ['America/New_York'], at('2026-11-01T05:00:00Z'))!.opensAt.toISOString()).toBe(
      '2026-11-01T14:00:00.000Z',
    );
  });

  it('moves a start inside the spring-forward gap on by the gap (02:30 -> 03:30 EDT)', () => {
    const o = nextOpening([w('02:30', '04:00', 'America/New_York')], [], at('2026-03-08T05:00:00Z'))!;
    // 02:30 does not exist that night; the window opens at 03:30 EDT (07:30Z) and closes at 04:00 EDT.
    expect(opening(o)).toEqual({ opensAt: '2026-03-08T07:30:00.000Z', closesAt: '2026-03-08T08:00:00.000Z' });
  });

  it('skips days the window is closed on', () => {
    // Friday 21:00 in New York, window weekdays only: Monday 09:00 (EDT after the change).
    const o = nextOpening([w('09:00', '20:00', 'recipient', ['mon', 'tue', 'wed', 'thu', 'fri'])], ['America/New_York'], at('2026-03-07T02:00:00Z'));
    expect(o!.opensAt.toISOString()).toBe('2026-03-09T13:00:00.000Z');
  });

  it("is open only where it is open in all of a number's zones", () => {
    // New York and Los Angeles, 09:00-20:00: 09:00 LA to 20:00 NY.
    expect(opening(nextOpening([w('09:00', '20:00')], ['America/New_York', 'America/Los_Angeles'], at('2026-06-10T12:00:00Z')))).toEqual({
      opensAt: '2026-06-10T16:00:00.000Z',
      closesAt: '2026-06-11T00:00:00.000Z',
    });
    // Zones too far apart for a short window: never.
    expect(nextOpening([w('09:00', '11:00')], ['America/New_York', 'America/Los_Angeles'], at('2026-06-10T12:00:00Z'))).toBeNull();
  });

  it('narrows a window to an enforced one in another zone, through the weeks the two DST rules disagree', () => {
    const batch = w('09:00', '17:00', 'Europe/London');
    const enforced = w('08:00', '21:00', 'America/New_York');
    // 2026-03-10: New York already on EDT (UTC-4), London still on GMT: 12:00Z opens New York's 08:00.
    expect(opening(nextOpening([batch, enforced], [], at('2026-03-10T05:00:00Z')))).toEqual({
      opensAt: '2026-03-10T12:00:00.000Z',
      closesAt: '2026-03-10T17:00:00.000Z',
    });
    // 2026-04-10: both on summer time: London 09:00 BST = 08:00Z, New York 08:00 EDT = 12:00Z.
    expect(nextOpening([batch, enforced], [], at('2026-04-10T05:00:00Z'))!.opensAt.toISOString()).toBe('2026-04-10T12:00:00.000Z');
  });

  it('tells open from closed', () => {
    expect(isOpenAt([w('09:00', '20:00')], ['Europe/Berlin'], at('2026-07-01T07:00:00Z'))).toBe(true);
    expect(isOpenAt([w('09:00', '20:00')], ['Europe/Berlin'], at('2026-07-01T18:00:00Z'))).toBe(false);
  });
});

// The open intervals were computed day by day through luxon, ~40 offset lookups (Intl) a day and
// zone; they now take a zone's offset once when it holds through the horizon. Both must agree for
// every zone, across the year's DST changes, for windows inside and around the changes' hours.
describe('openIntervals against the day-by-day computation', () => {
  function dayByDay(win: CallingWindow, zone: string, from: Date): Interval[] {
    const day0 = DateTime.fromJSDate(from, { zone }).startOf('day').minus({ days: 1 });
    const out: Interval[] = [];
    for (let i = 0; i <= OPENING_HORIZON_DAYS + 1; i++) {
      const day = day0.plus({ days: i });
      if (!win.days.includes(WEEKDAYS[day.weekday - 1])) continue;
      const [first, shifted] = [win.start, win.end].map((time) => computeScheduledAt(day.toISODate()!, time, zone).getTime());
      const tz = IANAZone.create(zone);
      // A start the clocks repeat (fall back: an hour, Troll's two, Lord Howe's half) opens at its
      // second pass, unless the end comes before that pass (both in the repeated hour).
      const wallOf = (t: number) => t + tz.offset(t) * 60_000;
      const second = [7_200_000, 3_600_000, 1_800_000].map((fold) => first + fold).find((later) => wallOf(later) === wallOf(first));
      // An end the clocks skip closes when they first read past it (not the gap's length later).
      const wanted = Date.UTC(day.year, day.month - 1, day.day, Number(win.end.slice(0, 2)), Number(win.end.slice(3)));
      let closes = shifted;
      while (closes - 60_000 + tz.offset(closes - 60_000) * 60_000 >= wanted) closes -= 60_000;
      const opens = second !== undefined && closes > second ? second : first;
      if (closes > opens) out.push([opens, closes]);
    }
    return out;
  }
  const windows = [w('09:00', '17:00', 'recipient'), w('01:30', '03:00', 'recipient', ['sun', 'mon', 'sat'])];
  // The horizons hold the year's DST changes: North America's and Europe's, both ways (the United
  // States' on the horizons' last day), and the southern hemisphere's (Australia, New Zealand, Chile).
  const froms = ['2026-02-21T12:00:00Z', '2026-03-24T12:00:00Z', '2026-09-25T12:00:00Z', '2026-10-17T12:00:00Z'].map(at);

  it('agree for every zone the runtime lists', () => {
    let compared = 0;
    let changing = 0;
    for (const zone of Intl.supportedValuesOf('timeZone')) {
      for (const from of froms) {
        const expected = windows.map((win) => dayByDay(win, zone, from));
        expect(
          windows.map((win) => openIntervals([win], [zone], from)),
          `${zone} from ${from.toISOString()}`,
        ).toEqual(expected);
        compared++;
        if (new Set(expected[0].map(([opens]) => opens % 86_400_000)).size > 1) changing++;
      }
    }
    // Greenland's changes fall at midnight: a day before an instant inside the gap is another date.
    for (const zone of ['America/Godthab', 'America/Scoresbysund']) {
      const from = at('2026-03-30T00:45:00Z');
      expect(
        windows.map((win) => openIntervals([win], [zone], from)),
        zone,
      ).toEqual(windows.map((win) => dayByDay(win, zone, from)));
    }
    expect(compared).toBeGreaterThan(1500);
    // Many of them straddle a DST change (the window opens at another UTC time after it).
    expect(changing).toBeGreaterThan(150);
    // ~1,700 zone horizons through luxon: seconds alone, more on a machine shared with other suites.
  }, 120_000);
});

describe("a window's values", () => {
  it('names each problem by field', () => {
    expect(callingWindowProblems({ start: '9:00', end: '24:01', days: ['mon', 'funday'], timezone: 'Mars/Base' })).toEqual([
      ['start', 'Value error, Invalid time, expected HH:MM'],
      ['end', 'Value error, Invalid time, expected HH:MM'],
      ['days.1', "Input should be 'mon', 'tue', 'wed', 'thu', 'fri', 'sat' or 'sun'"],
      ['timezone', "Value error, Unknown time zone 'Mars/Base'; give an IANA zone or 'recipient'"],
    ]);
    expect(callingWindowProblems({ start: '20:00', end: '09:00', timezone: 'recipient' })).toEqual([
      ['end', 'Value error, end must be after start (no overnight windows)'],
    ]);
    expect(callingWindowProblems({ start: '09:00', end: '20:00', days: [], timezone: 'recipient' })[0][0]).toBe('days');
  });

  it('reads back what was stored, and nothing else', () => {
    const win = w('09:00', '20:00', 'recipient', ['fri', 'mon']);
    expect(win.days).toEqual(['mon', 'fri']);
    expect(storedWindow(JSON.parse(JSON.stringify(win)))).toEqual(win);
    expect(storedWindow({ start: '09:00', end: '08:00', days: [], timezone: 'x' })).toBeNull();
    expect(storedWindow(null)).toBeNull();
    // The zone is checked too (through luxon's cache of zones), each time it is read.
    const zoned = w('09:00', '20:00', 'Europe/Paris', ['mon']);
    expect(storedWindow(JSON.parse(JSON.stringify(zoned)))).toEqual(zoned);
    for (let i = 0; i < 2; i++) {
      expect(storedWindow({ ...zoned, timezone: 'Fantasia/Castle' })).toBeNull();
      expect(storedWindow({ ...zoned, timezone: 'Europe/' + 'x'.repeat(60) })).toBeNull();
    }
  });
});

describe('zones of a number', () => {
  const table = numberZoneTable();
  it("come from libphonenumber's prefix table", () => {
    expect(zonesForNumber(table, '+12125550100')).toEqual(['America/New_York']);
    expect(zonesForNumber(table, '+13105550100')).toEqual(['America/Los_Angeles']);
    expect(zonesForNumber(table, '+442079460000')).toEqual(['Europe/London']);
    // 907-555 is not listed under 907 (Adak and Anchorage): every zone listed under the area code applies.
    expect(zonesForNumber(table, '+19075550100')).toEqual(['America/Adak', 'America/Anchorage', 'America/Juneau', 'Pacific/Honolulu']);
    // A number the table places no closer than the North American plan itself (toll-free,
    // premium): no zone, rather than all 42 of the plan's (which met a wide window by season).
    for (const code of ['800', '833', '844', '855', '866', '877', '888', '900']) expect(zonesForNumber(table, `+1${code}5550100`)).toBeNull();
  });
});

describe('placeInWindows', () => {
  const contact = (index: number, phoneNumber: string): NormalizedContact => ({
    index,
    externalId: `c${index}`,
    name: null,
    phoneNumber,
    alternatePhone: null,
    metadata: {},
  });
  const table = numberZoneTable();
  const now = at('2026-06-10T12:00:00Z'); // 08:00 in New York, 05:00 in Los Angeles

  it('gives each call its zones and first opening, and rejects contacts that can never be called', () => {
    const own = new Map([[3, 'Europe/London']]);
    const r = placeInWindows([contact(1, '+12125550100'), contact(2, '+13105550100'), contact(3, '+12125550101'), contact(4, '+18005550100')], [], {
      windows: [w('09:00', '20:00')],
      zonesOf: (n) => zonesForNumber(table, n),
      ownZone: (i) => own.get(i) ?? null,
      now,
    });
    expect(r.accepted.map((c) => c.index)).toEqual([1, 2, 3]);
    expect(r.placements.map((p) => [p.timezone, p.nextAttemptAt?.toISOString() ?? null, p.windowClosesAt!.toISOString()])).toEqual([
      ['America/New_York', '2026-06-10T13:00:00.000Z', '2026-06-11T00:00:00.000Z'],
      ['America/Los_Angeles', '2026-06-10T16:00:00.000Z', '2026-06-11T03:00:00.000Z'],
      // Its own zone narrows its number's: open from 09:00 in New York to 20:00 in London.
      ['America/New_York,Europe/London', '2026-06-10T13:00:00.000Z', '2026-06-10T19:00:00.000Z'],
    ]);
    expect(r.rejected).toEqual([
      // Toll-free: no zone of its own (number-zones.ts).
      expect.objectContaining({ index: 4, field: 'phone_number', message: NO_ZONE_MESSAGE }),
    ]);
  });

  it('rejects a number with no known zone, and judges fixed-zone windows in their own zone', () => {
    const none = placeInWindows([contact(1, '+12125550100')], [], { windows: [w('09:00', '20:00')], zonesOf: () => null, ownZone: () => null, now });
    expect(none.rejected).toEqual([{ index: 1, external_id: 'c1', field: 'phone_number', message: NO_ZONE_MESSAGE }]);
    const fixed = placeInWindows([contact(1, '+18005550100')], [], {
      windows: [w('09:00', '20:00', 'Asia/Tokyo')],
      zonesOf: () => null,
      ownZone: () => null,
      now,
    });
    expect(fixed.placements[0].timezone).toBe('Asia/Tokyo');
  });

  it("keeps the openings it computes in the map it is given: a create's later chunks reuse them", () => {
    const openings = new Map<string, ReturnType<typeof nextOpening>>();
    const place = (contacts: NormalizedContact[], zone: (i: number) => string) =>
      placeInWindows(contacts, [], { windows: [w('09:00', '20:00')], zonesOf: () => null, ownZone: zone, now, openings });
    place([contact(1, '+12125550100'), contact(2, '+12125550101')], (i) => (i === 1 ? 'Asia/Tokyo' : 'Europe/Paris'));
    expect([...openings.keys()].sort()).toEqual(['Asia/Tokyo', 'Europe/Paris']);
    // A later chunk takes Tokyo's opening from the map, not from the zone.
    const kept = { opensAt: at('2026-06-11T00:00:00Z'), closesAt: at('2026-06-11T01:00:00Z') };
    openings.set('Asia/Tokyo', kept);
    const later = place([contact(3, '+12125550102')], () => 'Asia/Tokyo');
    expect(later.placements).toEqual([
      { timezone: 'Asia/Tokyo', contactTimezone: 'Asia/Tokyo', nextAttemptAt: kept.opensAt, windowClosesAt: kept.closesAt },
    ]);
  });
});

describe('retryInWindow', () => {
  it('puts a retry at the next opening, and gives up when that is past the expiry', () => {
    const win = [w('09:00', '20:00', 'recipient', ['mon', 'tue', 'wed', 'thu', 'fri'])];
    // Due Friday 20:30 in New York: Monday 09:00.
    const due = at('2026-06-13T00:30:00Z');
    expect(retryInWindow(due, win, 'America/New_York', null)).toEqual({ at: at('2026-06-15T13:00:00Z'), windowClosesAt: at('2026-06-16T00:00:00Z') });
    expect(retryInWindow(due, win, 'America/New_York', at('2026-06-14T00:00:00Z'))).toBeNull();
  });
});

describe('replaceWaitingCall: a waiting call under changed windows', () => {
  // Friday 2026-03-06 13:30Z: 08:30 in New York, 05:30 in Los Angeles.
  const now = new Date('2026-03-06T13:30:00.000Z');
  const zonesOf = (e164: string) => zonesForNumber(numberZoneTable(), e164);
  const nine = normalizeWindow({ start: '09:00', end: '20:00', timezone: 'recipient' });
  const noonNY = normalizeWindow({ start: '12:00', end: '13:00', timezone: 'America/New_York' });
  const replace = (call: Partial<WaitingCall>, windows: CallingWindow[], recipientKeys = false) =>
    replaceWaitingCall(
      { status: 'pending', phoneNumber: '+12125550100', timezone: null, nextAttemptAt: null, waitReason: null, ...call },
      { windows, recipientKeys, zonesOf, now },
      openingsOf(windows, now),
    );
  const iso = (r: ReturnType<typeof replace>) => r && [r.timezone, r.nextAttemptAt?.toISOString() ?? null, r.windowClosesAt?.toISOString() ?? null];

  it("looks a plain call's zones up from its number, and ends one whose window never opens", () => {
    expect(iso(replace({}, [nine]))).toEqual(['America/New_York', '2026-03-06T14:00:00.000Z', '2026-03-07T01:00:00.000Z']);
    expect(iso(replace({ phoneNumber: '+13105550100' }, [nine]))).toEqual([
      'America/Los_Angeles',
      '2026-03-06T17:00:00.000Z',
      '2026-03-07T04:00:00.000Z',
    ]);
    // A toll-free number's 42 zones share no weekday hour of it (Guam is a day ahead).
    expect(replace({ phoneNumber: '+18005550100' }, [{ ...nine, days: ['mon', 'tue', 'wed', 'thu', 'fri'] }])).toBeNull();
  });

  it("keeps a recipient key (a contact's own zone) and ignores a fixed window's key", () => {
    expect(iso(replace({ timezone: 'Europe/London' }, [nine], true))).toEqual(['Europe/London', null, '2026-03-06T20:00:00.000Z']);
    // A key from a batch created under a fixed-zone window is not the recipient's.
    expect(iso(replace({ timezone: 'Europe/London' }, [nine], false))?.[0]).toBe('America/New_York');
    expect(iso(replace({ timezone: 'Europe/London' }, [noonNY], false))).toEqual([
      'America/New_York',
      '2026-03-06T17:00:00.000Z',
      '2026-03-06T18:00:00.000Z',
    ]);
  });

  it('never moves a retry or a capped call before its due time', () => {
    const due = new Date('2026-03-06T18:30:00.000Z');
    expect(iso(replace({ status: 'queued', nextAttemptAt: due, timezone: 'America/New_York' }, [noonNY], true))).toEqual([
      'America/New_York',
      '2026-03-07T17:00:00.000Z',
      '2026-03-07T18:00:00.000Z',
    ]);
    const past = new Date('2026-03-06T13:00:00.000Z');
    // Due already and the window open now: it keeps its place in line.
    expect(iso(replace({ status: 'queued', nextAttemptAt: past }, [{ ...nine, start: '08:00' }]))).toEqual([
      'America/New_York',
      '2026-03-06T13:00:00.000Z',
      '2026-03-07T01:00:00.000Z',
    ]);
    // A pending call waiting only for its old window's opening does not keep that time.
    expect(iso(replace({ nextAttemptAt: new Date('2026-03-09T13:00:00.000Z') }, [{ ...nine, start: '08:00' }]))).toEqual([
      'America/New_York',
      null,
      '2026-03-07T01:00:00.000Z',
    ]);
  });

  it('openingsOf answers as nextOpening does, for due times inside and past the horizon it caches', () => {
    const windows = [nine, noonNY];
    const openingOf = openingsOf(windows, now);
    for (let h = 0; h < 24 * 20; h += 7) {
      const from = new Date(now.getTime() + h * 3_600_000 + 123);
      expect(openingOf('Europe/London', from), from.toISOString()).toEqual(nextOpening(windows, ['Europe/London'], from));
    }
  });

  it('without windows, a call waits only for what held it', () => {
    expect(replace({ nextAttemptAt: new Date('2026-03-09T13:00:00.000Z'), timezone: 'America/New_York' }, [], true)).toEqual({
      timezone: 'America/New_York',
      nextAttemptAt: null,
      windowClosesAt: null,
    });
    const capped = new Date('2026-03-07T00:00:00.000Z');
    expect(replace({ nextAttemptAt: capped, waitReason: 'frequency_cap' }, [])).toEqual({
      timezone: null,
      nextAttemptAt: capped,
      windowClosesAt: null,
    });
  });
});
