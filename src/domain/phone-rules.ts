// A fast, exact re-statement of libphonenumber-js's `parsePhoneNumberFromString('+<digits>')` +
// `isValid()` for the common case, built from the same (min) metadata.
//
// Why: libphonenumber-js builds `new RegExp('^(?:' + pattern + ')$')` from multi-kilobyte pattern
// strings on every check, which costs 10–25µs per +1 number and dominated bulk batch creation.
// Here each pattern is compiled once per calling code. Inputs the fast path does not model (a
// national prefix that libphonenumber would try to strip, non-geographic calling codes) return
// `undefined` so the caller falls back to libphonenumber itself. test/domain/phone-rules.test.ts
// checks the two agree on large random and example-derived samples.
import { Metadata } from 'libphonenumber-js/core';
import metadataJson from 'libphonenumber-js/min/metadata';

// The runtime API of libphonenumber's Metadata class (its .d.ts only declares a sliver of it).
interface TypeApi {
  pattern(): string;
  possibleLengths(): number[] | undefined;
}
interface PlanApi {
  leadingDigits(): string | undefined;
  nationalNumberPattern(): string;
  nationalPrefixForParsing(): string | undefined;
  hasTypes(): boolean;
  type(name: string): TypeApi | false | undefined;
}
interface MetadataApi {
  selectNumberingPlan(countryOrCallingCode: string): MetadataApi;
  numberingPlan: PlanApi;
  getCountryCodesForCallingCode(callingCode: string): string[] | undefined;
}

// Same order as libphonenumber's getNumberType: fixed line first, then these.
const TYPE_ORDER = [
  'FIXED_LINE',
  'MOBILE',
  'PREMIUM_RATE',
  'TOLL_FREE',
  'SHARED_COST',
  'VOIP',
  'PERSONAL_NUMBER',
  'PAGER',
  'UAN',
  'VOICEMAIL',
] as const;

// libphonenumber's MIN_LENGTH_FOR_NSN / MAX_LENGTH_FOR_NSN / MAX_LENGTH_COUNTRY_CODE.
const MIN_NSN = 2;
const MAX_NSN = 17;
const MAX_CALLING_CODE_DIGITS = 3;

interface TypeRule {
  pattern: RegExp;
  lengths: ReadonlySet<number> | null;
}

interface CountryRule {
  leadingDigits: RegExp | null;
  national: RegExp;
  hasTypes: boolean;
  types: TypeRule[];
}

interface CallingCodeRule {
  /** In metadata order; the first is the calling code's main country. */
  countries: CountryRule[];
  nationalPrefix: RegExp | null;
}

const whole = (pattern: string) => new RegExp(`^(?:${pattern})$`);
const prefix = (pattern: string) => new RegExp(`^(?:${pattern})`);

const metadata = new (Metadata as unknown as new (json: unknown) => MetadataApi)(metadataJson);
// null: a calling code that exists but that the fast path leaves to libphonenumber.
const rules = new Map<string, CallingCodeRule | null>();

function countryRule(country: string): CountryRule {
  const plan = metadata.selectNumberingPlan(country).numberingPlan;
  const types: TypeRule[] = [];
  if (plan.hasTypes()) {
    for (const name of TYPE_ORDER) {
      const type = plan.type(name);
      if (!type || !type.pattern()) continue;
      const lengths = type.possibleLengths();
      types.push({ pattern: whole(type.pattern()), lengths: lengths ? new Set(lengths) : null });
    }
  }
  const leading = plan.leadingDigits();
  return {
    leadingDigits: leading ? prefix(leading) : null,
    national: whole(plan.nationalNumberPattern()),
    hasTypes: plan.hasTypes(),
    types,
  };
}

function callingCodeRule(callingCode: string): CallingCodeRule | null | undefined {
  if (rules.has(callingCode)) return rules.get(callingCode);
  const countries = metadata.getCountryCodesForCallingCode(callingCode);
  let rule: CallingCodeRule | null = null;
  if (countries && countries.length > 0 && !countries.includes('001')) {
    const nationalPrefix = metadata.selectNumberingPlan(callingCode).numberingPlan.nationalPrefixForParsing();
    rule = { countries: countries.map(countryRule), nationalPrefix: nationalPrefix ? prefix(nationalPrefix) : null };
  } else if (!countries) {
    // Not a geographic calling code: unknown to metadata, or non-geographic (e.g. +800).
    return undefined;
  }
  rules.set(callingCode, rule);
  return rule;
}

/** libphonenumber's getNumberType(...) !== undefined. */
function hasNumberType(nsn: string, c: CountryRule): boolean {
  if (!c.national.test(nsn)) return false;
  for (const t of c.types) {
    if (t.lengths && !t.lengths.has(nsn.length)) continue;
    if (t.pattern.test(nsn)) return true;
  }
  return false;
}

function isValidFor(nsn: string, c: CountryRule): boolean {
  return c.hasTypes ? hasNumberType(nsn, c) : c.national.test(nsn);
}

/**
 * `digits`: the number's digits without '+', at most 15. Returns the E.164 form, null when
 * libphonenumber would call it invalid, or undefined when the caller must ask libphonenumber.
 */
export function fastE164(digits: string): string | null | undefined {
  // Fewer than 3 digits is not a viable number; calling codes never start with 0.
  if (digits.length < 3 || digits[0] === '0') return null;
  for (let i = 1; i <= MAX_CALLING_CODE_DIGITS && i < digits.length; i++) {
    const callingCode = digits.slice(0, i);
    const rule = callingCodeRule(callingCode);
    if (rule === undefined) {
      if (metadataHasCallingCode(callingCode)) return undefined;
      continue;
    }
    if (rule === null) return undefined;
    const nsn = digits.slice(i);
    if (rule.nationalPrefix?.test(nsn)) return undefined;
    if (nsn.length < MIN_NSN || nsn.length > MAX_NSN) return null;
    return isValidFor(nsn, chooseCountry(nsn, rule)) ? `+${digits}` : null;
  }
  // No calling code matched: libphonenumber's parse returns nothing.
  return digits.length > MAX_CALLING_CODE_DIGITS || !anyPrefixIsNonGeographic(digits) ? null : undefined;
}

/** libphonenumber's getCountryByCallingCode, falling back to the main country as isValid() does. */
function chooseCountry(nsn: string, rule: CallingCodeRule): CountryRule {
  if (rule.countries.length === 1) return rule.countries[0];
  for (const c of rule.countries) {
    if (c.leadingDigits) {
      if (c.leadingDigits.test(nsn)) return c;
    } else if (hasNumberType(nsn, c)) {
      return c;
    }
  }
  return rule.countries[0];
}

const nonGeographic = (metadataJson as unknown as { nonGeographic?: Record<string, unknown> }).nonGeographic ?? {};

function metadataHasCallingCode(callingCode: string): boolean {
  return Object.hasOwn(nonGeographic, callingCode);
}

function anyPrefixIsNonGeographic(digits: string): boolean {
  for (let i = 1; i <= MAX_CALLING_CODE_DIGITS && i <= digits.length; i++) {
    if (metadataHasCallingCode(digits.slice(0, i))) return true;
  }
  return false;
}
