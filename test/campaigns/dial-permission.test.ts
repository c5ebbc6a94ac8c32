// dialPermission: whether a number may be dialled now, judged in every zone that can apply to it
// (its prefix's, every zone of its area code for an unlisted exchange, and the contact's own
// zone), at fixed instants on both sides of the DST changes. The property re-derives the rule from
// luxon and the raw prefix table, apart from the code under test.
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { callingWindowProblems, normalizeWindow, type CallingWindow } from '../../src/domain/calling-window.ts';
import { dialPermission, zonesOfDial } from '../../src/domain/dial-permission.ts';
import { fixedOffsetReason } from '../../src/domain/zones.ts';
import { placeInWindows } from '../../src/domain/call-windows.ts';
import { zonesForNumber } from '../../src/domain/number-zones.ts';
import { numberZoneTable } from '../../src/services/batches/number-zone-table.ts';

const table = numberZoneTable();
const w = (start: string, end: string, timezone = 'recipient', days?: string[]): CallingWindow => normalizeWindow({ start, end, timezone, days });
const at = (iso: string) => new Date(iso);
const permit = (number: string, windows: CallingWindow[], now: string, contactZone: string | null = null) =>
  dialPermission(table, { number, contactZone, windows, now: at(now) });

describe('defect 1: the alternate number is judged in its own zones', () => {
  const window = [w('16:00', '20:00')];
  it('refuses a California number at 15:08 PST though New York is at 18:08, and names its opening', () => {
    // Winter (EST/PST): 23:08Z.
    expect(permit('+12125550100', window, '2026-01-15T23:08:00Z').allowed).toBe(true);
    const alt = permit('+13105550100', window, '2026-01-15T23:08:00Z');
    expect(alt).toMatchObject({ allowed: false, reason: 'calling_window', zones: ['America/Los_Angeles'] });
    expect(alt.allowed === false && alt.opensAt?.toISOString()).toBe('2026-01-16T00:00:00.000Z');
  });
  it('does the same in summer (EDT/PDT), an hour earlier in UTC', () => {
    const alt = permit('+13105550100', window, '2026-07-15T22:08:00Z');
    expect(alt.allowed === false && alt.opensAt?.toISOString()).toBe('2026-07-15T23:00:00.000Z');
  });
  it('never reaches a Pacific number at 05:00 under an 08:00 start', () => {
    // 08:00 EST = 13:00Z = 05:00 PST.
    expect(permit('+13105550100', [w('08:00', '21:00')], '2026-01-15T13:00:00Z').allowed).toBe(false);
  });
});

describe("defect 2: a contact's zone narrows its number's zones", () => {
  it('does not dial a 212 number at midnight New York time because the contact says Honolulu', () => {
    // 19:00 HST in January = 05:00Z = 00:00 EST.
    const r = permit('+12125550100', [w('19:00', '21:00')], '2026-01-16T05:00:00Z', 'Pacific/Honolulu');
    expect(r).toMatchObject({ allowed: false, reason: 'never_opens', zones: ['America/New_York', 'Pacific/Honolulu'] });
  });
  it('dials when both are open (New York and London, before and after the March change)', () => {
    const window = [w('09:00', '20:00')];
    // 2026-03-06 (EST, GMT): open from 14:00Z to 20:00Z.
    expect(permit('+12125550100', window, '2026-03-06T13:59:00Z', 'Europe/London').allowed).toBe(false);
    expect(permit('+12125550100', window, '2026-03-06T14:00:00Z', 'Europe/London').allowed).toBe(true);
    // 2026-03-10 (EDT from the 8th, still GMT): from 13:00Z.
    expect(permit('+12125550100', window, '2026-03-10T13:00:00Z', 'Europe/London').allowed).toBe(true);
    expect(permit('+12125550100', window, '2026-03-10T20:00:00Z', 'Europe/London').allowed).toBe(false);
  });
  it('also judges a fixed zone a window names', () => {
    const windows = [w('09:00', '20:00'), w('10:00', '12:00', 'Europe/Berlin')];
    // 10:00 Berlin (CET) is 04:00 in New York: the recipient window is closed.
    expect(permit('+12125550100', windows, '2026-01-15T09:00:00Z').allowed).toBe(false);
  });
});

describe('defect 3: an unlisted exchange of a split area code is judged in all of its zones', () => {
  it.each([
    ['+18505550100', ['America/New_York', 'America/Chicago']],
    ['+18125550100', ['America/New_York', 'America/Chicago']],
    ['+15415550100', ['America/Los_Angeles', 'America/Denver']],
    ['+18075550100', ['America/Toronto', 'America/Winnipeg']],
  ])('%s', (number, zones) => {
    expect(zonesForNumber(table, number)).toEqual(expect.arrayContaining(zones));
  });
  it('keeps a listed exchange to its own zone', () => {
    expect(zonesForNumber(table, '+18504305555')).toEqual(['America/Chicago']);
  });
  it('does not reach a Central line at 07:00 under an 08:00 start (New York 08:00, July)', () => {
    // 08:00 EDT = 12:00Z = 07:00 CDT.
    expect(permit('+18505550100', [w('08:00', '21:00')], '2026-07-15T12:00:00Z')).toMatchObject({ allowed: false, reason: 'calling_window' });
    expect(permit('+18505550100', [w('08:00', '21:00')], '2026-07-15T13:00:00Z').allowed).toBe(true);
  });
});

describe('defect 4: fixed offsets are refused for windows and contacts', () => {
  it.each(['EST', 'est', 'MST', 'HST', '+05:00', '-0500', 'Etc/GMT+5', 'GMT', 'Etc/UTC', 'Zulu'])('refuses %s', (zone) => {
    expect(fixedOffsetReason(zone, { allowUtc: true })).toMatch(
      /fixed UTC offset with no daylight saving time; give a geographic IANA zone such as America\/New_York/,
    );
    expect(callingWindowProblems({ start: '08:00', end: '21:00', timezone: zone })).toEqual([
      ['timezone', expect.stringContaining('fixed UTC offset')],
    ]);
  });
  it('allows geographic zones and aliases that follow DST, and UTC for a window only', () => {
    for (const zone of ['America/New_York', 'US/Eastern', 'EST5EDT', 'America/Phoenix', 'Asia/Tokyo'])
      expect(fixedOffsetReason(zone, { allowUtc: false })).toBeNull();
    expect(fixedOffsetReason('UTC', { allowUtc: true })).toBeNull();
    expect(fixedOffsetReason('UTC', { allowUtc: false })).not.toBeNull();
  });
  it('rejects a contact whose own zone is a fixed offset, with the reason, at placement', () => {
    const contact = { index: 1, externalId: 'c1', name: null, phoneNumber: '+12125550100', alternatePhone: null, metadata: {} };
    const r = placeInWindows([contact], [], {
      windows: [w('08:00', '21:00')],
      zonesOf: (n) => zonesForNumber(table, n),
      ownZone: () => 'EST',
      now: at('2026-07-15T15:00:00Z'),
    });
    expect(r.rejected).toEqual([{ index: 1, external_id: 'c1', field: 'timezone', message: expect.stringContaining("'EST' is a fixed UTC offset") }]);
  });
});

describe('property: allowed only when every zone that applies is open', () => {
  // Independent of the code under test: the raw table's longest prefix, widened to every zone
  // listed under it, and the window read with luxon in each zone.
  const raw = table.table as Record<string, string>;
  const keys = Object.keys(raw);
  function expectedZones(number: string, contactZone: string | null): string[] {
    const digits = number.slice(1);
    let p = digits;
    while (p && !(p in raw)) p = p.slice(0, -1);
    const zones = new Set(p ? raw[p].split('&') : []);
    if (p) for (const k of keys) if (k.startsWith(p)) for (const z of raw[k].split('&')) zones.add(z);
    if (contactZone) zones.add(contactZone);
    return [...zones];
  }
  const openIn = (win: CallingWindow, zone: string, instant: Date) => {
    const local = DateTime.fromJSDate(instant, { zone });
    const hhmm = local.toFormat('HH:mm');
    const day = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'][local.weekday - 1];
    return win.days.includes(day as never) && hhmm >= win.start && hhmm < win.end;
  };
  const prefixes = [
    '1212',
    '1310',
    '1850',
    '1812',
    '1219',
    '1270',
    '1906',
    '1541',
    '1208',
    '1785',
    '1620',
    '1308',
    '1423',
    '1807',
    '1907',
    '44',
    '61',
    '81',
    '49',
    '55',
  ];
  const number = fc.tuple(fc.constantFrom(...prefixes), fc.stringMatching(/^[2-9][0-9]{6}$/)).map(([p, rest]) => `+${p}${rest}`);
  const zone = fc.constantFrom(
    null,
    'America/New_York',
    'America/Chicago',
    'America/Los_Angeles',
    'Pacific/Honolulu',
    'Europe/London',
    'Asia/Kolkata',
    'Australia/Sydney',
  );
  const hour = fc.integer({ min: 0, max: 22 });
  const windowArb = fc
    .tuple(hour, fc.integer({ min: 1, max: 14 }), fc.constantFrom('recipient', 'recipient', 'Europe/Berlin', 'America/Denver'))
    .map(([h, len, tz]) =>
      w(`${String(h).padStart(2, '0')}:00`, `${String(Math.min(23, h + len)).padStart(2, '0')}:${h + len > 23 ? '59' : '00'}`, tz),
    );
  // Instants through 2026, DST changes included, on whole minutes (window edges are minutes).
  const instant = fc.integer({ min: Date.UTC(2026, 0, 1) / 60_000, max: Date.UTC(2026, 11, 31) / 60_000 }).map((m) => new Date(m * 60_000));

  it('never allows a dial when a zone that applies is closed, and allows it when all are open', () => {
    fc.assert(
      fc.property(number, zone, fc.array(windowArb, { minLength: 1, maxLength: 2 }), instant, (n, contactZone, windows, now) => {
        const r = dialPermission(table, { number: n, contactZone, windows, now });
        const zones = expectedZones(n, contactZone);
        expect(new Set(zonesOfDial(table, n, contactZone))).toEqual(new Set(zones));
        const open = windows.every((win) => (win.timezone === 'recipient' ? zones : [win.timezone]).every((z) => openIn(win, z, now)));
        expect(r.allowed).toBe(open);
      }),
      { numRuns: 400, seed: 20261129 },
    );
  });
});
