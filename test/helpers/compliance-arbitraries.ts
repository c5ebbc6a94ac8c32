// fast-check arbitraries for the compliance checker (issue 33): numbers from every North American
// zone (split area codes with exchanges both listed in and missing from the prefix table, toll-free)
// and from more than ten other countries, contact zones, calling windows (recipient and fixed-zone,
// wee-hours edges that DST changes cut or repeat), and instants around the DST changes of the US,
// the EU, Australia, New Zealand and Chile.
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { getCountryCallingCode, isValidPhoneNumber, type CountryCode } from 'libphonenumber-js';
import mobileExamples from 'libphonenumber-js/mobile/examples';
import {
  federalHolidays,
  ORACLE_PROFILES,
  oracleNumberZones,
  RAW_ZONES,
  SPLIT_AREA_CODES,
  STATE_OF,
  type OracleProfile,
  type OracleWindow,
} from './compliance-oracle.ts';

const digits = (n: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: n, maxLength: n });

// --- North America: every zone of the table, each area code reachable. -----------------------
const NANP_AREA_CODES = Object.keys(RAW_ZONES).filter((k) => k.length === 4 && k.startsWith('1') && typeof RAW_ZONES[k] === 'string');
/** Area codes grouped by the zone(s) the table gives them: picking a group first reaches every zone. */
const NANP_BY_ZONE: string[][] = (() => {
  const groups = new Map<string, string[]>();
  for (const k of NANP_AREA_CODES) groups.set(RAW_ZONES[k], [...(groups.get(RAW_ZONES[k]) ?? []), k]);
  return [...groups.values()];
})();
/** Exchanges the table lists under an area code (7 digits after +1 at most). */
const listedCache = new Map<string, string[]>();
const listedUnder = (ac: string): string[] => {
  let listed = listedCache.get(ac);
  if (!listed) listedCache.set(ac, (listed = Object.keys(RAW_ZONES).filter((k) => k.startsWith(`1${ac}`) && k.length > 4)));
  return listed;
};

const nanpValid = (e164: string) => isValidPhoneNumber(e164);

/** Any NANP number: an area code of a random zone, a random exchange and line. */
const nanpAnyZone = fc
  .constantFrom(...NANP_BY_ZONE)
  .chain((acs) => fc.tuple(fc.constantFrom(...acs), fc.integer({ min: 200, max: 999 }), digits(4)))
  .map(([k, exchange, line]) => `+${k}${exchange}${line}`)
  .filter(nanpValid);

const SPLIT = Object.keys(SPLIT_AREA_CODES);
/** A split area code's number with an exchange the table lists (judged in that exchange's zone). */
const splitListed = fc
  .constantFrom(...SPLIT.filter((ac) => listedUnder(ac).length > 0))
  .chain((ac) => fc.constantFrom(...listedUnder(ac)))
  .chain((prefix) => digits(11 - prefix.length).map((rest) => `+${prefix}${rest}`))
  .filter(nanpValid);
/** A split area code's number whose exchange the table does not list (every zone of the area code). */
const splitUnlisted = fc
  .tuple(fc.constantFrom(...SPLIT), fc.integer({ min: 200, max: 999 }), digits(4))
  .filter(([ac, ex]) => !listedUnder(ac).some((k) => `1${ac}${ex}`.startsWith(k) || k.startsWith(`1${ac}${ex}`)))
  .map(([ac, ex, line]) => `+1${ac}${ex}${line}`)
  .filter(nanpValid);
/** A number of a state with its own rules (Florida, Oklahoma, Maryland, Texas, Louisiana, Mississippi, Rhode Island). */
const stateRuled = fc
  .tuple(fc.constantFrom(...STATE_OF.keys()), fc.integer({ min: 200, max: 999 }), digits(4))
  .map(([ac, ex, line]) => `+1${ac}${ex}${line}`)
  .filter(nanpValid);
const tollFree = fc
  .tuple(fc.constantFrom('800', '888', '877', '866'), digits(7))
  .map(([ac, rest]) => `+1${ac}${rest}`)
  .filter(nanpValid);

// --- Other countries: fixed lines in named cities and mobiles from libphonenumber's examples. ----
/** x = a random digit. Cities in multi-zone countries on purpose (Perth, Vladivostok, Manaus, Tijuana). */
const FIXED_TEMPLATES = [
  '+44207946xxxx', // London
  '+4930xxxxxxx', // Berlin
  '+331xxxxxxxx', // Paris
  '+3491xxxxxxx', // Madrid
  '+3906xxxxxxxx', // Rome
  '+3531xxxxxxx', // Dublin
  '+612xxxxxxxx', // Sydney
  '+618xxxxxxxx', // Perth / Adelaide / Darwin: one prefix, several zones
  '+617xxxxxxxx', // Brisbane (no DST)
  '+813xxxxxxxx', // Tokyo
  '+9111xxxxxxxx', // Delhi
  '+5511xxxxxxxx', // São Paulo
  '+5592xxxxxxxx', // Manaus
  '+5255xxxxxxxx', // Mexico City
  '+52664xxxxxxx', // Tijuana
  '+7495xxxxxxx', // Moscow
  '+7423xxxxxxx', // Vladivostok
  '+649xxxxxxx', // Auckland
  '+2721xxxxxxx', // Cape Town
  '+5622xxxxxxx', // Santiago
];
const MOBILE_COUNTRIES: CountryCode[] = [
  'GB',
  'DE',
  'FR',
  'ES',
  'IT',
  'IE',
  'NL',
  'AU',
  'JP',
  'IN',
  'BR',
  'MX',
  'RU',
  'NZ',
  'ZA',
  'CL',
  'KR',
  'PH',
  'AR',
  'CA',
];
const MOBILE_TEMPLATES = MOBILE_COUNTRIES.map((c) => {
  const national = (mobileExamples as Record<string, string>)[c];
  return `+${getCountryCallingCode(c)}${national.slice(0, -3)}xxx`;
});

/** Templates that give a valid number at least sometimes (checked once, deterministically). */
function usable(templates: string[]): string[] {
  return templates.filter((t) => {
    for (let i = 0; i < 200; i++) {
      let n = i * 7919;
      const filled = t.replace(/x/g, () => String((n = (n * 31 + 7) % 1000003) % 10));
      if (isValidPhoneNumber(filled)) return true;
    }
    return false;
  });
}
const INTERNATIONAL = usable([...FIXED_TEMPLATES, ...MOBILE_TEMPLATES]);
export const COUNTRY_CODES_COVERED = new Set(INTERNATIONAL.map((t) => /^\+(1|7|35\d|2\d|3\d|4\d|5\d|6\d|8\d|9\d)/.exec(t)![1]));

const international = fc
  .constantFrom(...INTERNATIONAL)
  .chain((t) =>
    digits((t.match(/x/g) ?? []).length).map((d) => {
      let i = 0;
      return t.replace(/x/g, () => d[i++]);
    }),
  )
  .filter((n) => isValidPhoneNumber(n));

export const phoneNumber: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: nanpAnyZone },
  { weight: 3, arbitrary: splitUnlisted },
  { weight: 2, arbitrary: splitListed },
  { weight: 3, arbitrary: stateRuled },
  { weight: 1, arbitrary: tollFree },
  { weight: 4, arbitrary: international },
);

// --- Zones. -------------------------------------------------------------------------------
export const GEO_ZONES = [
  'America/New_York',
  'America/Chicago',
  'America/Denver',
  'America/Phoenix',
  'America/Los_Angeles',
  'America/Anchorage',
  'Pacific/Honolulu',
  'America/St_Johns',
  'America/Halifax',
  'America/Regina',
  'Europe/London',
  'Europe/Berlin',
  'Europe/Moscow',
  'Asia/Kolkata',
  'Asia/Kathmandu',
  'Asia/Tokyo',
  'Australia/Sydney',
  'Australia/Adelaide',
  'Australia/Perth',
  'Australia/Lord_Howe',
  'Pacific/Auckland',
  'Pacific/Chatham',
  'America/Sao_Paulo',
  'America/Santiago',
  'Africa/Johannesburg',
] as const;
export const contactZone: fc.Arbitrary<string | null> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(null) },
  { weight: 2, arbitrary: fc.constantFrom(...GEO_ZONES) },
);
/** A contact's zone for this number: often one of its own (a consistent contact), else any; `none`: weight of no zone at all. */
export const contactZoneFor = (number: string, none = 0): fc.Arbitrary<string | null> => {
  const own = oracleNumberZones(number).filter((z) => !z.startsWith('Etc/'));
  const some = own.length ? fc.oneof({ weight: 2, arbitrary: contactZone }, { weight: 1, arbitrary: fc.constantFrom(...own) }) : contactZone;
  return none ? fc.oneof({ weight: none, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: some }) : some;
};

// --- Windows. -----------------------------------------------------------------------------
const hhmm = (minutes: number) => `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
const WEEK = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
/** Realistic hours, any minute-precise span, and wee-hours spans that a DST change cuts or repeats. */
const span = fc
  .oneof(
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        ['08:00', '21:00'],
        ['09:00', '20:00'],
        ['08:00', '20:00'],
        ['10:00', '18:00'],
        ['16:00', '20:00'],
        ['00:00', '23:59'],
        ['00:00', '24:00'],
        ['18:00', '24:00'],
      ),
    },
    {
      weight: 3,
      arbitrary: fc
        .tuple(fc.integer({ min: 0, max: 1438 }), fc.integer({ min: 1, max: 900 }))
        .map(([s, len]) => [hhmm(s), hhmm(Math.min(1439, s + len))]),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 1, max: 240 })).map(([s, len]) => [hhmm(s), hhmm(s + len)]),
    },
  )
  .filter(([s, e]) => e > s);
const days = fc.option(
  fc.subarray(WEEK, { minLength: 1 }).map((d) => WEEK.filter((x) => d.includes(x))),
  { nil: undefined, freq: 2 },
);
export const windowArb: fc.Arbitrary<OracleWindow> = fc
  .tuple(span, days, fc.oneof({ weight: 4, arbitrary: fc.constant('recipient') }, { weight: 1, arbitrary: fc.constantFrom('UTC', ...GEO_ZONES) }))
  .map(([[start, end], d, timezone]) => (d ? { start, end, days: d, timezone } : { start, end, timezone }));

// --- Instants around DST changes. ------------------------------------------------------------
const DST_ZONES = [
  'America/New_York',
  'America/Chicago',
  'America/Denver',
  'America/Los_Angeles',
  'America/St_Johns',
  'Europe/London',
  'Europe/Berlin',
  'Australia/Sydney',
  'Australia/Lord_Howe',
  'Pacific/Auckland',
  'America/Santiago',
];

/** Every offset change of these zones in 2026-2027 (found by luxon, to the minute), with its zone. */
export const DST_CHANGES_BY_ZONE: ReadonlyArray<{ zone: string; at: Date }> = (() => {
  const out: Array<{ zone: string; at: Date }> = [];
  const from = Date.UTC(2026, 0, 1);
  for (const zone of DST_ZONES) {
    const off = (t: number) => DateTime.fromMillis(t, { zone }).offset;
    for (let day = 0; day < 730; day++) {
      let lo = from + day * 86_400_000;
      let hi = lo + 86_400_000;
      if (off(lo) === off(hi)) continue;
      while (hi - lo > 60_000) {
        const mid = lo + Math.floor((hi - lo) / 120_000) * 60_000;
        if (off(mid) === off(lo)) lo = mid;
        else hi = mid;
      }
      out.push({ zone, at: new Date(hi) });
    }
  }
  return out;
})();
export const DST_CHANGES: readonly Date[] = [...new Set(DST_CHANGES_BY_ZONE.map((c) => c.at.getTime()))]
  .sort((a, b) => a - b)
  .map((t) => new Date(t));

/**
 * A fixed-zone window whose edges fall in or beside the hour a DST change skips or repeats in its
 * zone, and an instant within 2.5 hours of the change: where interval arithmetic goes wrong.
 */
export const dstEdgeCase: fc.Arbitrary<{ window: OracleWindow; now: Date }> = fc
  .tuple(
    fc.constantFrom(...DST_CHANGES_BY_ZONE),
    fc.integer({ min: -150, max: 90 }),
    fc.integer({ min: 1, max: 180 }),
    fc.integer({ min: -150, max: 150 }),
  )
  .map(([{ zone, at }, a, len, c]) => {
    const local = (m: number) => DateTime.fromMillis(at.getTime() + m * 60_000, { zone }).toFormat('HH:mm');
    return { window: { start: local(a), end: local(a + len), timezone: zone }, now: new Date(at.getTime() + c * 60_000) };
  })
  .filter(({ window: w }) => w.end > w.start);

/** Federal holidays (and observed days) of 2026-2027, as UTC noons. */
const HOLIDAYS = [2026, 2027].flatMap((y) => [...federalHolidays(y)]).map((d) => new Date(`${d}T12:00:00Z`));

/** An instant within two days of a DST change or a federal holiday (whole minutes, sometimes a few seconds off), or any in 2026-2027. */
export const instantArb: fc.Arbitrary<Date> = fc.oneof(
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom(...HOLIDAYS), fc.integer({ min: -36 * 60, max: 36 * 60 }))
      .map(([t, m]) => new Date(t.getTime() + m * 60_000)),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.constantFrom(...DST_CHANGES), fc.integer({ min: -48 * 60, max: 48 * 60 }), fc.constantFrom(0, 0, 0, 1, 59))
      .map(([t, m, s]) => new Date(t.getTime() + m * 60_000 + s * 1000)),
  },
  { weight: 1, arbitrary: fc.integer({ min: Date.UTC(2026, 0, 1) / 60_000, max: Date.UTC(2027, 11, 31) / 60_000 }).map((m) => new Date(m * 60_000)) },
);

/** Compliance profiles an account or batch opts into: none half the time. */
export const profilesArb: fc.Arbitrary<OracleProfile[]> = fc.oneof(
  { weight: 1, arbitrary: fc.constant<OracleProfile[]>([]) },
  { weight: 1, arbitrary: fc.subarray<OracleProfile>([...ORACLE_PROFILES], { minLength: 1 }) },
);
