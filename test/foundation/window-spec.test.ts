import { describe, expect, it } from 'vitest';
import { parseWindowSpec } from '../../src/cli/window-spec.ts';

describe("the CLI's calling window", () => {
  it('reads hours, days and a zone in any order after the hours', () => {
    expect(parseWindowSpec('09:00-20:00 mon-fri recipient')).toEqual({
      start: '09:00',
      end: '20:00',
      days: ['mon', 'tue', 'wed', 'thu', 'fri'],
      timezone: 'recipient',
    });
    expect(parseWindowSpec('9:30-18:00 Europe/Berlin sat,sun')).toEqual({
      start: '09:30',
      end: '18:00',
      days: ['sat', 'sun'],
      timezone: 'Europe/Berlin',
    });
    expect(parseWindowSpec('10:00-16:00')).toEqual({ start: '10:00', end: '16:00' });
    expect(parseWindowSpec('08:00-21:00 mon,wed-fri')).toMatchObject({ days: ['mon', 'wed', 'thu', 'fri'] });
    expect(parseWindowSpec(' none ')).toBeNull();
  });

  it('says what it expected', () => {
    expect(() => parseWindowSpec('9-5')).toThrow(/expected HH:MM-HH:MM/);
    expect(() => parseWindowSpec('09:00-17:00 fri-mon')).toThrow(/range such as mon-fri/);
  });
});
