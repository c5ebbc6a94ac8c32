// The compliance checker (issue 33, "How it is shown"): every dial lawful where the called person
// is, re-derived from first principles by an oracle apart from the code under test
// (test/helpers/compliance-oracle.ts: the wall clock in each zone, read with luxon). Two parts:
// (a) a fast pure property over thousands of random (number, contact zone, windows, instant)
// cases comparing dialPermission's answer to the oracle's; (b) random campaigns run end to end on
// the simulator through the real worker under a test clock across DST changes, every recorded dial
// checked against the oracle, the do-not-call list and opt-outs, the frequency cap, expiry, and
// exactly one terminal webhook per dialled call.
//
// Replay a failure: fast-check prints `seed` and `path`; run this file with
// COMPLIANCE_SEED=<seed> (and COMPLIANCE_PATH=<path> for the shrunk case). COMPLIANCE_RUNS
// multiplies the number of cases (e.g. 10 for a long hunt). docs/campaigns.md says more.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialPermission } from '../../src/domain/dial-permission.ts';
import { normalizeWindow } from '../../src/domain/calling-window.ts';
import { profilesInForce } from '../../src/domain/compliance/profiles.ts';
import { numberZoneTable } from '../../src/services/batches/number-zone-table.ts';
import {
  COUNTRY_CODES_COVERED,
  contactZoneFor,
  dstEdgeCase,
  instantArb,
  phoneNumber,
  profilesArb,
  windowArb,
} from '../helpers/compliance-arbitraries.ts';
import { nearOffsetChange, oracleNumberZones, oracleVerdict, SPLIT_AREA_CODES } from '../helpers/compliance-oracle.ts';
import { campaignArb, replayParameters, runCampaign } from '../helpers/compliance-campaign.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';

const table = numberZoneTable();

describe('the oracle itself', () => {
  it('judges an unlisted exchange of each split area code in both of its zones', () => {
    for (const [ac, zones] of Object.entries(SPLIT_AREA_CODES)) {
      // 555-01xx is fictional everywhere: never a listed exchange.
      expect(oracleNumberZones(`+1${ac}5550144`), ac).toEqual(expect.arrayContaining([...zones]));
    }
  });
  it('covers at least ten countries besides North America', () => {
    expect([...COUNTRY_CODES_COVERED].filter((c) => c !== '1').length).toBeGreaterThanOrEqual(10);
  });
});

describe('(a) dialPermission against the oracle', () => {
  const RUNS = 2_500 * Number(process.env.COMPLIANCE_RUNS ?? 1);
  it(`never allows a dial the oracle finds outside the hours, over ${RUNS} random (number, contact zone, windows, profiles, instant) cases across DST changes`, () => {
    let allowed = 0;
    const refused = { nearChange: 0, noZone: new Set<string>() };
    fc.assert(
      fc.property(
        phoneNumber.chain((n) => fc.tuple(fc.constant(n), contactZoneFor(n))),
        fc.oneof(
          { weight: 1, arbitrary: fc.constant([]) },
          { weight: 4, arbitrary: fc.tuple(windowArb) },
          { weight: 1, arbitrary: fc.tuple(windowArb, windowArb) },
        ),
        instantArb,
        profilesArb,
        ([number, zone], windows, now, profiles) => {
          const answer = dialPermission(table, {
            number,
            contactZone: zone,
            windows: windows.map((w) => normalizeWindow(w)),
            profiles: profilesInForce(profiles),
            now,
          });
          const verdict = oracleVerdict(number, zone, windows, now, profiles);
          // The compliance rule: a dial the service allows is open by every zone's wall clock.
          if (answer.allowed) {
            allowed += 1;
            expect(verdict.why, `allowed at ${now.toISOString()} in ${answer.zones.join(',')}`).toBeNull();
            return;
          }
          if (!verdict.open) return;
          // Refused though every wall clock reads open: more restrictive than the rule, which is
          // lawful but must have a reason. Known ones: a DST change nearby, where the service reads an
          // ambiguous local time once (the repeated hour's first pass; a start in the skipped hour
          // moved on by the gap, docs/campaigns.md); and a number to which the service gives no zone
          // while its area code has some (no_zone). Anything else fails.
          if (answer.reason === 'no_zone') refused.noZone.add(number.slice(0, 5));
          else if (verdict.zones.some((z) => nearOffsetChange(z, now, 2 * 3_600_000))) refused.nearChange += 1;
          else expect.fail(`refused a lawful dial of ${number} at ${now.toISOString()} (${answer.reason}) in ${verdict.zones.join(',')}`);
        },
      ),
      { numRuns: RUNS, ...replayParameters() },
    );
    // The cases reach both answers: a property that only ever refuses would prove nothing.
    expect(allowed).toBeGreaterThan(RUNS / 20);
    console.log(
      `(a) ${RUNS} cases: ${allowed} allowed, ${RUNS - allowed} refused; lawful by the wall clock but refused: ${refused.nearChange} at a DST change, ` +
        `no zone for ${[...refused.noZone].sort().join(' ') || 'none'}`,
    );
  });
});

describe('(a) at DST changes', () => {
  const RUNS = 1_000 * Number(process.env.COMPLIANCE_RUNS ?? 1);
  it(`never allows a dial outside a window whose edges fall in the skipped or repeated hour (${RUNS} cases)`, () => {
    const seen = { allowed: 0, refusedLawful: 0 };
    fc.assert(
      fc.property(dstEdgeCase, phoneNumber, ({ window, now }, number) => {
        const answer = dialPermission(table, { number, contactZone: null, windows: [normalizeWindow(window)], now });
        const verdict = oracleVerdict(number, null, [window], now);
        if (answer.allowed) {
          seen.allowed += 1;
          expect(verdict.why, `allowed at ${now.toISOString()}`).toBeNull();
        } else if (verdict.open) seen.refusedLawful += 1;
      }),
      { numRuns: RUNS, ...replayParameters() },
    );
    expect(seen.allowed).toBeGreaterThan(RUNS / 20);
    console.log(
      `(a) DST edges: ${RUNS} cases, ${seen.allowed} allowed, ${seen.refusedLawful} lawful by the wall clock but refused (the service reads a repeated local time once)`,
    );
  });
});

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ config: { RETRY_MIN_DELAY_SECONDS: '1' } });
});
afterAll(() => t?.close());

// Found by the DST-edge property (seed -1460537125): a window that starts inside the hour a
// fall-back repeats opens at that time's first pass and stays open through the second pass of the
// hour, when the wall clock reads earlier than the start. calling-window.ts read an ambiguous start
// as its earlier instant; it now opens at the later one (wallClockStart).
describe('a window that starts in the repeated hour of a fall-back (violation found by the checker)', () => {
  it('is closed at 01:10 EST on 2026-11-01 for 01:30-02:00 New York (service allowed it: opened at 01:30 EDT, closed 02:00 EST)', () => {
    const window = { start: '01:30', end: '02:00', timezone: 'recipient' };
    const now = new Date('2026-11-01T06:10:00Z');
    expect(oracleVerdict('+12125550144', null, [window], now).open).toBe(false);
    expect(dialPermission(table, { number: '+12125550144', contactZone: null, windows: [normalizeWindow(window)], now }).allowed).toBe(false);
  });
  it("is closed at 02:00 CET on 2026-10-25 for 02:52-03:00 Berlin (the property's shrunk case)", () => {
    const window = { start: '02:52', end: '03:00', timezone: 'Europe/Berlin' };
    const now = new Date('2026-10-25T01:00:00Z');
    expect(oracleVerdict('+4930123456', null, [window], now).open).toBe(false);
    expect(dialPermission(table, { number: '+4930123456', contactZone: null, windows: [normalizeWindow(window)], now }).allowed).toBe(false);
  });
  it('end to end: the worker does not dial a New York number at 01:10 EST under 01:30-02:00', async () => {
    const r = await runCampaign(t, {
      start: new Date('2026-11-01T06:10:00Z'),
      profiles: [],
      defaultWindow: null,
      enforcedWindow: null,
      cap: null,
      batches: [
        {
          atStep: 0,
          contacts: [{ phone: '+12125550144', alternate: null, timezone: null, sim: 'completed' }],
          window: { start: '01:30', end: '02:00', timezone: 'recipient' },
          useAlternate: false,
          retry: null,
          expiresAfterMinutes: null,
          profiles: [],
        },
      ],
      dncAdds: [],
      steps: [{ mode: 'next', ms: 60_000 }],
    });
    expect([r.batches, r.rejectedBatches, r.violations]).toEqual([1, [], []]);
    expect(r.dials).toBeGreaterThan(0);
  });
});

// us_states' Florida limit (3 dials of a number in 24 hours), counted from the provider's dial log:
// the fourth call's claim is withheld (its history says `dial` then `dial_withheld`; the campaigns
// once read that `dial` entry as a dial, seed -999316515, hence the provider's log as ground truth).
describe("a state's calls-per-24-hours limit", () => {
  it('dials a Florida number at most 3 times in 24 hours under us_states', async () => {
    const contact = { phone: '+17729977293', alternate: null, timezone: null, sim: 'completed' };
    const r = await runCampaign(t, {
      start: new Date('2026-03-09T14:00:00Z'),
      profiles: [],
      defaultWindow: null,
      enforcedWindow: null,
      cap: null,
      batches: [
        {
          atStep: 0,
          contacts: [contact, contact, contact, contact],
          window: null,
          useAlternate: false,
          retry: null,
          expiresAfterMinutes: null,
          profiles: ['us_states'],
        },
      ],
      dncAdds: [],
      steps: [{ mode: 'jump', ms: 3_600_000 }],
    });
    expect([r.batches, r.rejectedBatches, r.violations]).toEqual([1, [], []]);
    expect(r.dials).toBe(3);
  });

  // Found by the campaigns (seed -1382706952): docs/campaigns.md says every dial of the account to
  // the number counts, in any batch, but number_dials is written only for an account with a cap, so
  // dials from a batch without us_states are not counted: a us_states batch then dials a Maryland
  // number a fourth time in 24 hours. Every dial of a rule-bound number is now recorded (hasFrequencyRule).
  it("counts the account's dials from a batch without the profile (violation found by the checker)", async () => {
    const contact = { phone: '+16679401612', alternate: null, timezone: null, sim: 'completed' };
    const plain = {
      atStep: 0,
      contacts: [contact, contact, contact],
      window: null,
      useAlternate: false,
      retry: null,
      expiresAfterMinutes: null,
      profiles: [],
    };
    const ruled = { ...plain, atStep: 1, contacts: [contact], profiles: ['us_states' as const] };
    const r = await runCampaign(t, {
      start: new Date('2026-03-09T14:00:00Z'),
      profiles: [],
      defaultWindow: null,
      enforcedWindow: null,
      cap: null,
      batches: [plain, ruled],
      dncAdds: [],
      steps: [
        { mode: 'jump', ms: 3_600_000 },
        { mode: 'jump', ms: 3_600_000 },
      ],
    });
    expect([r.batches, r.rejectedBatches, r.violations]).toEqual([2, [], []]);
    expect(r.dials).toBe(3);
  });
});

describe('(b) random campaigns end to end', () => {
  const RUNS = 30 * Number(process.env.COMPLIANCE_RUNS ?? 1);
  it(`places no dial outside the hours, to a listed or opted-out number, over the cap or after expiry, and ends each dialled call with one terminal webhook (${RUNS} campaigns)`, async () => {
    const totals = { campaigns: 0, batches: 0, dials: 0, steps: 0, optOuts: 0, listed: 0, ruled: 0, capped: 0, retries: 0, alternates: 0 };
    await fc.assert(
      fc.asyncProperty(campaignArb, async (campaign) => {
        const r = await runCampaign(t, campaign);
        totals.campaigns += 1;
        totals.batches += r.batches;
        totals.dials += r.dials;
        totals.steps += r.steps;
        for (const k of ['optOuts', 'listed', 'ruled', 'capped', 'retries', 'alternates'] as const) totals[k] += r.exercised[k];
        expect(r.violations).toEqual([]);
      }),
      // Shrinking a failed campaign replays it many times: after 150 s fast-check reports the
      // smallest case found so far (an unfailed run cut short there passes on what it ran).
      { numRuns: RUNS, interruptAfterTimeLimit: 150_000, ...replayParameters() },
    );
    // Campaigns that never dial would prove nothing.
    expect(totals.dials).toBeGreaterThan(RUNS);
    console.log(
      `(b) ${totals.campaigns} campaigns: ${totals.batches} batches, ${totals.dials} dials checked (${totals.retries} retries, ${totals.alternates} alternates, ` +
        `${totals.ruled} under a profile rule, ${totals.capped} under a cap, ${totals.optOuts} opt-out answers), ${totals.listed} do-not-call adds, ${totals.steps} clock steps`,
    );
  }, 600_000);
});
