// The compliance rule table and its application (src/domain/compliance, dial-permission.ts): which
// rules bind a number, the hours each leaves open in the called party's zones, federal holidays
// per year, and the most restrictive reading winning over a batch's own window.
import { describe, expect, it } from 'vitest';
import { usFederalHolidays, isHoliday } from '../../src/domain/compliance/holidays.ts';
import { complianceProfilesProblems, hasFrequencyRule, profilesInForce, rulesFor, usJurisdictionsOf } from '../../src/domain/compliance/profiles.ts';
import { COMPLIANCE_PROFILES, COMPLIANCE_RULES, COMPLIANCE_RULES_VERSION } from '../../src/domain/compliance/rules-v1.ts';
import { STATE_OF_AREA_CODE } from '../../src/domain/compliance/area-code-states.ts';
import { dialPermission, newDialCache } from '../../src/domain/dial-permission.ts';
import { numberZoneTable } from '../../src/services/batches/number-zone-table.ts';
import type { CallingWindow } from '../../src/domain/calling-window.ts';

const table = numberZoneTable();
const ask = (number: string, now: string, profiles: string[], windows: CallingWindow[] = [], contactZone: string | null = null) =>
  dialPermission(table, { number, contactZone, windows, profiles: profilesInForce(profiles), now: new Date(now) });

describe('the rule table', () => {
  it('is versioned, and every rule names its source, a known profile and a jurisdiction', () => {
    expect(COMPLIANCE_RULES_VERSION).toMatch(/v1$/);
    const ids = COMPLIANCE_RULES.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const r of COMPLIANCE_RULES) {
      expect(r.source.length, r.id).toBeGreaterThan(10);
      expect(COMPLIANCE_PROFILES).toContain(r.profile);
      expect(r.jurisdiction === 'US' || [...STATE_OF_AREA_CODE.values()].includes(r.jurisdiction), r.id).toBe(true);
      expect(r.hours || r.noCallDays || r.frequency, r.id).toBeTruthy();
    }
  });

  it('maps area codes to states, territories included; Canada and the Caribbean are not US', () => {
    expect(usJurisdictionsOf('+13055550100')).toEqual(['US', 'FL']);
    expect(usJurisdictionsOf('+14055550100')).toEqual(['US', 'OK']);
    expect(usJurisdictionsOf('+13015550100')).toEqual(['US', 'MD']);
    expect(usJurisdictionsOf('+12065550100')).toEqual(['US', 'WA']);
    expect(usJurisdictionsOf('+17875550100')).toEqual(['US', 'PR']);
    expect(usJurisdictionsOf('+18005550100')).toEqual(['US']);
    expect(usJurisdictionsOf('+14165550100')).toBeNull();
    expect(usJurisdictionsOf('+18765550100')).toBeNull();
    expect(usJurisdictionsOf('+442071838750')).toBeNull();
  });
});

describe('profiles', () => {
  it('are validated: known names, each once, at most one of each', () => {
    expect(complianceProfilesProblems(['us_tcpa', 'us_states'])).toEqual([]);
    expect(complianceProfilesProblems(['us_tcpa', 'eu_gdpr'])).toEqual([[1, expect.stringContaining("'us_tcpa'")]]);
    expect(complianceProfilesProblems(['us_tcpa', 'us_tcpa'])).toEqual([[1, "'us_tcpa' is listed twice"]]);
    expect(complianceProfilesProblems(['a', 'b', 'c', 'd'])[0][1]).toMatch(/at most 3/);
  });

  it("combine the account's and the batch's; us_states brings the federal floor with it", () => {
    expect(profilesInForce(['us_states'], null)).toEqual(['us_tcpa', 'us_states']);
    expect(profilesInForce(['us_federal_holidays'], ['us_tcpa'])).toEqual(['us_tcpa', 'us_federal_holidays']);
    expect(rulesFor('+13055550100', profilesInForce(['us_states'])).map((r) => r.id)).toEqual(['us_tcpa.hours', 'us_fl.hours', 'us_fl.frequency']);
    expect(rulesFor('+12125550100', profilesInForce(['us_states'])).map((r) => r.id)).toEqual(['us_tcpa.hours']);
    expect(rulesFor('+442071838750', profilesInForce(['us_states']))).toEqual([]);
  });
});

describe('us_tcpa', () => {
  it("allows 08:00-21:00 in the called party's time: not 07:59 or 21:00 in New York", () => {
    // January: New York is UTC-5.
    expect(ask('+12125550100', '2026-01-15T12:59:00Z', ['us_tcpa'])).toMatchObject({
      allowed: false,
      reason: 'calling_window',
      opensAt: new Date('2026-01-15T13:00:00Z'),
    });
    expect(ask('+12125550100', '2026-01-15T13:00:00Z', ['us_tcpa'])).toMatchObject({
      allowed: true,
      closesAt: new Date('2026-01-16T02:00:00Z'),
      rules: ['us_tcpa.hours'],
    });
    expect(ask('+12125550100', '2026-01-16T02:00:00Z', ['us_tcpa']).allowed).toBe(false);
    // A London number is not bound by it.
    expect(ask('+442071838750', '2026-01-16T04:00:00Z', ['us_tcpa'])).toMatchObject({ allowed: true, rules: [] });
  });

  it("is judged in every zone of a split area code and the contact's own zone", () => {
    // 850-555 is unlisted: New York and Chicago. 08:00 in New York is 07:00 in Chicago (July).
    const a = ask('+18505550100', '2026-07-15T12:00:00Z', ['us_tcpa']);
    expect(a).toMatchObject({ allowed: false, opensAt: new Date('2026-07-15T13:00:00Z'), zones: ['America/New_York', 'America/Chicago'] });
    // A New York number whose contact lives in Honolulu: 20:30 in New York is 14:30 there, 21:00 closes.
    expect(ask('+12125550100', '2026-07-16T01:00:00Z', ['us_tcpa'], [], 'Pacific/Honolulu')).toMatchObject({
      allowed: false,
      reason: 'calling_window',
    });
  });

  it('narrows a wider window (most restrictive wins) and says what was checked', () => {
    const window: CallingWindow = { start: '07:00', end: '23:00', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], timezone: 'recipient' };
    const a = ask('+12125550100', '2026-01-15T12:30:00Z', ['us_tcpa'], [window]);
    expect(a).toMatchObject({ allowed: false, opensAt: new Date('2026-01-15T13:00:00Z') });
    expect(a.checks).toEqual({
      zones: ['America/New_York'],
      windows: [window],
      rules: ['us_tcpa.hours'],
      rulesVersion: COMPLIANCE_RULES_VERSION,
      frequency: [],
    });
    // Without the profile, the window alone lets it through.
    expect(ask('+12125550100', '2026-01-15T12:30:00Z', [], [window]).allowed).toBe(true);
  });
});

describe('us_states', () => {
  it('Florida: 08:00-20:00 and at most 3 calls in 24 hours', () => {
    // 20:00 in Miami (EST) is 01:00Z: TCPA would allow it until 21:00.
    const a = ask('+13055550100', '2026-01-16T01:00:00Z', ['us_states']);
    expect(a).toMatchObject({ allowed: false, opensAt: new Date('2026-01-16T13:00:00Z') });
    expect(a.checks.frequency).toEqual([{ rule: 'us_fl.frequency', maxCalls: 3, periodSeconds: 86_400 }]);
  });

  it('Oklahoma and Maryland close at 20:00', () => {
    expect(ask('+14055550100', '2026-01-16T01:59:00Z', ['us_states'])).toMatchObject({ allowed: true, closesAt: new Date('2026-01-16T02:00:00Z') });
    expect(ask('+14055550100', '2026-01-16T02:00:00Z', ['us_states']).allowed).toBe(false);
    expect(ask('+13015550100', '2026-01-16T01:00:00Z', ['us_states']).allowed).toBe(false);
  });

  it('Texas: noon on Sundays, 09:00 on other days', () => {
    // 2026-01-18 is a Sunday; Dallas is UTC-6.
    expect(ask('+12145550100', '2026-01-18T15:30:00Z', ['us_states'])).toMatchObject({ allowed: false, opensAt: new Date('2026-01-18T18:00:00Z') });
    expect(ask('+12145550100', '2026-01-19T15:00:00Z', ['us_states']).allowed).toBe(true);
  });

  it('Louisiana: no calls on Sundays or federal holidays; the next opening skips both', () => {
    // Saturday 2026-12-26 at 20:00 in New Orleans (UTC-6): Sunday closed, then Monday 28th opens.
    expect(ask('+15045550100', '2026-12-27T02:00:00Z', ['us_states'])).toMatchObject({ allowed: false, opensAt: new Date('2026-12-28T14:00:00Z') });
    // Christmas (Friday 2026-12-25) at noon.
    expect(ask('+15045550100', '2026-12-25T18:00:00Z', ['us_states'])).toMatchObject({ allowed: false, opensAt: new Date('2026-12-26T14:00:00Z') });
  });
});

describe('numbers whose dials are recorded for a frequency rule, whatever the profiles', () => {
  it('are those of a state whose rule limits calls per period', () => {
    // Florida (305), Maryland (667), Oklahoma (405) have 3 per 24 h; New York (212), toll-free and non-US have none.
    expect(['+13055550100', '+16679401612', '+14055550100'].map(hasFrequencyRule)).toEqual([true, true, true]);
    expect(['+12125550100', '+18005550100', '+442071838750'].map(hasFrequencyRule)).toEqual([false, false, false]);
  });
});

describe('federal holidays', () => {
  it('are computed per year with their observed dates', () => {
    expect(usFederalHolidays(2026)).toEqual([
      '2026-01-01',
      '2026-01-19',
      '2026-02-16',
      '2026-05-25',
      '2026-06-19',
      '2026-07-03',
      '2026-07-04',
      '2026-09-07',
      '2026-10-12',
      '2026-11-11',
      '2026-11-26',
      '2026-12-25',
    ]);
    // 2028-01-01 is a Saturday: observed on Friday 2027-12-31.
    expect(isHoliday('us_federal', '2027-12-31')).toBe(true);
    expect(isHoliday('us_federal', '2027-12-30')).toBe(false);
  });

  it("us_federal_holidays: a whole local day without calls, in the called party's date", () => {
    // 2026-07-03 (observed Independence Day) 12:00 in Los Angeles; the next opening is the 5th? No: the 4th is a holiday too.
    expect(ask('+13105550100', '2026-07-03T19:00:00Z', ['us_federal_holidays'])).toMatchObject({
      allowed: false,
      opensAt: new Date('2026-07-05T07:00:00Z'),
    });
  });
});

describe('a cache kept across dials', () => {
  it('gives the answers a fresh look gives, a day later too', () => {
    const cache = newDialCache(new Date('2026-01-15T10:00:00Z'));
    for (const now of ['2026-01-15T10:00:00Z', '2026-01-15T13:30:00Z', '2026-01-16T02:30:00Z', '2026-01-17T14:00:00Z']) {
      for (const n of ['+12125550100', '+13055550100', '+15045550100']) {
        const q = { number: n, contactZone: null, windows: [], profiles: profilesInForce(['us_states']), now: new Date(now) };
        expect(dialPermission(table, { ...q, cache }), `${n} ${now}`).toEqual(dialPermission(table, q));
      }
    }
  });
});
