// The compliance rule table, version 1: the quiet hours, no-call days and call-frequency limits an
// account or a batch opts into with a compliance profile (docs/campaigns.md "Compliance
// profiles"). Data only, reviewed as one table: a change of any rule is a new version (the
// version is stated in the docs and in every dial's checks). Hours are the called party's local
// time, judged in every zone of the number dialled and the contact's own zone (dial-permission.ts).
//
// Each rule names its source. Reviewed against the statutes' text where it was at hand and
// against public secondary summaries otherwise (`review`); this is not legal advice, and a rule
// whose reading is uncertain takes the more restrictive reading. Exemptions a statute grants
// (prior express consent, established business relationship) are not modelled: a profile applies
// its rules to every call of the batch.
import type { Weekday } from '../calling-window.ts';
import type { HolidayCalendar } from './holidays.ts';

export const COMPLIANCE_RULES_VERSION = 'us-2026-11-29.v1';

export const COMPLIANCE_PROFILES = ['us_tcpa', 'us_states', 'us_federal_holidays'] as const;
export type ComplianceProfile = (typeof COMPLIANCE_PROFILES)[number];

/** What each profile means (docs and GraphQL descriptions read it). */
export const PROFILE_DESCRIPTIONS: Readonly<Record<ComplianceProfile, string>> = {
  us_tcpa: "US numbers: calls only 08:00-21:00 in the called party's local time (TCPA).",
  us_states: "us_tcpa plus the state rules of the number's state (by area code): hours, no-call days, calls per 24 hours.",
  us_federal_holidays: "US numbers: no calls on federal holidays (5 U.S.C. 6103) in the called party's local date.",
};

/** Profiles a profile brings with it: state rules never apply without the federal floor. */
export const PROFILE_INCLUDES: Readonly<Record<ComplianceProfile, readonly ComplianceProfile[]>> = {
  us_tcpa: [],
  us_states: ['us_tcpa'],
  us_federal_holidays: [],
};

export interface ComplianceHours {
  days: readonly Weekday[];
  /** Local `HH:MM`, inclusive. */
  start: string;
  /** Local `HH:MM`, exclusive. */
  end: string;
}

export interface ComplianceRule {
  /** Stable id, named in each dial's checks and the docs. */
  id: string;
  profile: ComplianceProfile;
  /** `US`: every US number; a two-letter state code: numbers of that state's area codes (area-code-states.ts). */
  jurisdiction: string;
  /** When calls may be placed; a day in no entry has no calling hours at all. */
  hours?: readonly ComplianceHours[];
  /** No calls on these calendars' days. */
  noCallDays?: readonly HolidayCalendar[];
  /** At most `maxCalls` dials of one number in any rolling `periodSeconds` (the frequency cap's machinery). */
  frequency?: { maxCalls: number; periodSeconds: number };
  source: string;
  /** `statute`: read in the statute's text; `secondary`: from public summaries of it, to be confirmed. */
  review: 'statute' | 'secondary';
  note?: string;
}

const ALL: readonly Weekday[] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
const MON_SAT: readonly Weekday[] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const DAY = 86_400;

export const COMPLIANCE_RULES: readonly ComplianceRule[] = [
  {
    id: 'us_tcpa.hours',
    profile: 'us_tcpa',
    jurisdiction: 'US',
    hours: [{ days: ALL, start: '08:00', end: '21:00' }],
    source:
      "47 U.S.C. § 227(c); 47 C.F.R. § 64.1200(c)(1) (no telephone solicitation before 8 a.m. or after 9 p.m. local time at the called party's location); also 16 C.F.R. § 310.4(c)",
    review: 'statute',
  },
  {
    id: 'us_federal_holidays.no_call',
    profile: 'us_federal_holidays',
    jurisdiction: 'US',
    noCallDays: ['us_federal'],
    source: '5 U.S.C. § 6103(a) (the legal public holidays); observed dates per Executive Order 11582',
    review: 'statute',
    note: 'Not required by federal law: an opt-in courtesy. States that forbid calls on holidays are in us_states.',
  },
  {
    id: 'us_fl.hours',
    profile: 'us_states',
    jurisdiction: 'FL',
    hours: [{ days: ALL, start: '08:00', end: '20:00' }],
    source: 'Fla. Stat. § 501.616(6)(a) (as amended by 2021 SB 1120, with the Florida Telephone Solicitation Act, Fla. Stat. § 501.059)',
    review: 'secondary',
  },
  {
    id: 'us_fl.frequency',
    profile: 'us_states',
    jurisdiction: 'FL',
    frequency: { maxCalls: 3, periodSeconds: DAY },
    source:
      'Fla. Stat. § 501.616(6)(b) (no more than three commercial telephone solicitation calls from any number to a person over a 24-hour period on the same subject matter)',
    review: 'secondary',
    note: 'Subject matter is not known to the service: every call of the account to the number counts.',
  },
  {
    id: 'us_ok.hours',
    profile: 'us_states',
    jurisdiction: 'OK',
    hours: [{ days: ALL, start: '08:00', end: '20:00' }],
    source: 'Okla. Stat. tit. 15, § 775C.4 (Oklahoma Telephone Solicitation Act of 2022)',
    review: 'secondary',
  },
  {
    id: 'us_ok.frequency',
    profile: 'us_states',
    jurisdiction: 'OK',
    frequency: { maxCalls: 3, periodSeconds: DAY },
    source: 'Okla. Stat. tit. 15, § 775C.4 (no more than three commercial telephonic sales calls to a person in 24 hours on the same subject matter)',
    review: 'secondary',
    note: 'Subject matter is not known to the service: every call of the account to the number counts.',
  },
  {
    id: 'us_md.hours',
    profile: 'us_states',
    jurisdiction: 'MD',
    hours: [{ days: ALL, start: '08:00', end: '20:00' }],
    source: 'Md. Code Ann., Com. Law § 14-4503 (Stop the Spam Calls Act of 2023)',
    review: 'secondary',
  },
  {
    id: 'us_md.frequency',
    profile: 'us_states',
    jurisdiction: 'MD',
    frequency: { maxCalls: 3, periodSeconds: DAY },
    source: 'Md. Code Ann., Com. Law § 14-4503 (Stop the Spam Calls Act of 2023: no more than three calls in 24 hours on the same subject matter)',
    review: 'secondary',
    note: 'Subject matter is not known to the service: every call of the account to the number counts.',
  },
  {
    id: 'us_tx.hours',
    profile: 'us_states',
    jurisdiction: 'TX',
    hours: [
      { days: MON_SAT, start: '09:00', end: '21:00' },
      { days: ['sun'], start: '12:00', end: '21:00' },
    ],
    source:
      'Tex. Bus. & Com. Code § 301.051 (not before 9 a.m. or after 9 p.m. on a weekday or Saturday, nor before noon or after 9 p.m. on a Sunday)',
    review: 'secondary',
  },
  {
    id: 'us_la.hours',
    profile: 'us_states',
    jurisdiction: 'LA',
    hours: [{ days: MON_SAT, start: '08:00', end: '20:00' }],
    noCallDays: ['us_federal'],
    source:
      "La. Pub. Serv. Comm'n General Order R-29617 § V(A)(2); La. R.S. 45:811 (no calls on Sundays or legal holidays, nor between 8 p.m. and 8 a.m.)",
    review: 'secondary',
    note: 'Legal holidays of La. R.S. 1:55 beyond the federal ones (and days the governor proclaims) are not in the calendar yet.',
  },
  {
    id: 'us_ri.hours',
    profile: 'us_states',
    jurisdiction: 'RI',
    hours: [
      { days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '18:00' },
      { days: ['sat'], start: '10:00', end: '17:00' },
    ],
    noCallDays: ['us_federal'],
    source:
      'R.I. Gen. Laws § 5-61-3.6 with § 5-61-2 ("hours of operation": 9 a.m.-6 p.m. weekdays, 10 a.m.-5 p.m. Saturdays, never on Sundays or legal holidays)',
    review: 'secondary',
    note: "Rhode Island's own holidays (Victory Day, and others of R.I. Gen. Laws § 25-1-1) are not in the calendar yet.",
  },
  {
    id: 'us_ms.hours',
    profile: 'us_states',
    jurisdiction: 'MS',
    hours: [{ days: MON_SAT, start: '08:00', end: '20:00' }],
    noCallDays: ['us_federal'],
    source: "Miss. Code Ann. § 77-3-725 (8 a.m.-8 p.m., no calls on Sunday); legal holidays per the state's restricted-call-date practice",
    review: 'secondary',
  },
];
