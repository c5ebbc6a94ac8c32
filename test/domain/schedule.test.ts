import { describe, expect, it } from 'vitest';
import { computeScheduledAt, extractZoneName, isValidScheduleDate, isValidScheduleTime, parseTimezoneLabel } from '../../src/domain/schedule.ts';

describe('parseTimezoneLabel', () => {
  it('takes the zone name out of the documented label form', () => {
    expect(parseTimezoneLabel('America/New_York (EST, UTC-05:00)')).toBe('America/New_York');
    expect(parseTimezoneLabel('Asia/Kolkata (IST, UTC+05:30)')).toBe('Asia/Kolkata');
  });

  it('accepts a plain IANA name, with surrounding blanks', () => {
    expect(parseTimezoneLabel('Europe/Berlin')).toBe('Europe/Berlin');
    expect(parseTimezoneLabel('  UTC  ')).toBe('UTC');
  });

  it('returns the zone database spelling of a name written in another case, and keeps aliases as written', () => {
    expect(parseTimezoneLabel('america/new_york (EST, UTC-05:00)')).toBe('America/New_York');
    expect(parseTimezoneLabel('EUROPE/BERLIN')).toBe('Europe/Berlin');
    expect(parseTimezoneLabel('US/Eastern')).toBe('US/Eastern');
  });

  it('does not check the label against the zone (it depends on the season it was rendered in)', () => {
    expect(parseTimezoneLabel('America/New_York (EDT, UTC-04:00)')).toBe('America/New_York');
  });

  it('rejects unknown zones, also inside a well-formed label', () => {
    expect(parseTimezoneLabel('Mars/Base')).toBeNull();
    expect(parseTimezoneLabel('Mars/Base (MST, UTC+01:00)')).toBeNull();
    expect(parseTimezoneLabel('UTC+05:00')).toBeNull();
  });

  it('rejects malformed labels', () => {
    expect(parseTimezoneLabel('')).toBeNull();
    expect(parseTimezoneLabel('America/New_York (EST')).toBeNull();
    expect(parseTimezoneLabel('America/New_York (EST) extra')).toBeNull();
    expect(parseTimezoneLabel('America/New York')).toBeNull();
  });

  it('extractZoneName returns the name part whether or not the zone exists', () => {
    expect(extractZoneName('Mars/Base (MST, UTC+01:00)')).toBe('Mars/Base');
    expect(extractZoneName('two words')).toBeNull();
  });
});

describe('schedule date and time formats', () => {
  it('accepts real YYYY-MM-DD dates only', () => {
    expect(isValidScheduleDate('2024-02-29')).toBe(true);
    expect(isValidScheduleDate('2023-02-29')).toBe(false);
    expect(isValidScheduleDate('2024-13-01')).toBe(false);
    expect(isValidScheduleDate('2024-1-05')).toBe(false);
    expect(isValidScheduleDate('2024-01-05T00:00')).toBe(false);
    expect(isValidScheduleDate('0000-01-01')).toBe(false);
  });

  it('accepts HH:MM from 00:00 to 23:59 only', () => {
    expect(isValidScheduleTime('00:00')).toBe(true);
    expect(isValidScheduleTime('23:59')).toBe(true);
    expect(isValidScheduleTime('24:00')).toBe(false);
    expect(isValidScheduleTime('12:60')).toBe(false);
    expect(isValidScheduleTime('9:30')).toBe(false);
    expect(isValidScheduleTime('09:30:00')).toBe(false);
  });
});

describe('computeScheduledAt', () => {
  const iso = (date: string, time: string, zone: string) => computeScheduledAt(date, time, zone).toISOString();

  it('converts wall time in the zone to UTC', () => {
    expect(iso('2024-06-01', '12:00', 'Asia/Kolkata')).toBe('2024-06-01T06:30:00.000Z');
    expect(iso('2024-01-15', '09:00', 'America/New_York')).toBe('2024-01-15T14:00:00.000Z');
    expect(iso('2024-07-15', '09:00', 'America/New_York')).toBe('2024-07-15T13:00:00.000Z');
    expect(iso('2024-12-31', '23:59', 'UTC')).toBe('2024-12-31T23:59:00.000Z');
  });

  it('moves a time inside a DST gap forward', () => {
    // 02:30 does not exist on these days; it becomes 03:30 local.
    expect(iso('2024-03-10', '02:30', 'America/New_York')).toBe('2024-03-10T07:30:00.000Z');
    expect(iso('2024-03-31', '01:30', 'Europe/London')).toBe('2024-03-31T01:30:00.000Z');
    expect(iso('2024-10-06', '02:30', 'Australia/Sydney')).toBe('2024-10-05T16:30:00.000Z');
  });

  it('takes the earlier instant for an ambiguous (fold) time', () => {
    // luxon alone picks the later instant for New York and London.
    expect(iso('2024-11-03', '01:30', 'America/New_York')).toBe('2024-11-03T05:30:00.000Z');
    expect(iso('2024-10-27', '01:30', 'Europe/London')).toBe('2024-10-27T00:30:00.000Z');
    expect(iso('2024-04-07', '02:30', 'Australia/Sydney')).toBe('2024-04-06T15:30:00.000Z');
    // Half-hour DST shift.
    expect(iso('2024-04-07', '01:45', 'Australia/Lord_Howe')).toBe('2024-04-06T14:45:00.000Z');
  });

  it('is exact around (not inside) a transition', () => {
    expect(iso('2024-11-03', '00:59', 'America/New_York')).toBe('2024-11-03T04:59:00.000Z');
    expect(iso('2024-11-03', '02:00', 'America/New_York')).toBe('2024-11-03T07:00:00.000Z');
    expect(iso('2024-03-10', '03:00', 'America/New_York')).toBe('2024-03-10T07:00:00.000Z');
  });

  it('throws on inputs the request parser would have rejected', () => {
    expect(() => computeScheduledAt('2024-02-30', '10:00', 'UTC')).toThrow(RangeError);
    expect(() => computeScheduledAt('2024-02-01', '25:00', 'UTC')).toThrow(RangeError);
    expect(() => computeScheduledAt('2024-02-01', '10:00', 'Mars/Base')).toThrow(RangeError);
  });
});
