import { describe, expect, it } from 'vitest';
import { windowText, windowWaitText } from '../../src/web/format.ts';

describe("the dashboard's window texts", () => {
  it('say a window in a line', () => {
    expect(windowText({ start: '09:00', end: '20:00', days: ['mon', 'tue', 'wed', 'thu', 'fri'], timezone: 'recipient' })).toBe(
      "09:00-20:00, mon-fri, each contact's own time",
    );
    expect(windowText({ start: '10:00', end: '12:00', days: ['sat', 'sun'], timezone: 'Europe/Berlin' })).toBe(
      '10:00-12:00, sat, sun, Europe/Berlin',
    );
    expect(windowText({ start: '10:00', end: '12:00', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], timezone: 'UTC' })).toBe(
      '10:00-12:00, every day, UTC',
    );
  });

  it("say when a waiting call is placed, in its contact's time too", () => {
    const text = windowWaitText(
      { nextAttemptAt: '2026-03-09T13:00:00.000Z', timezone: 'America/New_York,America/Chicago' },
      new Date('2026-03-06T12:00:00Z'),
    );
    expect(text).toMatch(
      /^calling window opens \S.* \(09:00 AM America\/New_York and others\)$|^calling window opens \S.* \(09:00 America\/New_York and others\)$/,
    );
    expect(windowWaitText({ nextAttemptAt: '2026-03-09T13:00:00.000Z', timezone: 'Not/AZone' })).toMatch(/^calling window opens \S[^(]*$/);
  });
});
