// An account's frequency cap: a number is dialled at most `maxCalls` times in any rolling
// `periodSeconds`, across all of the account's batches (docs/campaigns.md). Pure: bounds and the
// reason a capped call waits; the claim counts the dials (src/dispatch/store/claim-calls.ts).
import type { PathIssue } from './field-issue.ts';
import type { WaitReason } from './wait-reason.ts';

export interface FrequencyCap {
  maxCalls: number;
  periodSeconds: number;
}

export const FREQUENCY_CAP_MAX_CALLS = { min: 1, max: 100 } as const;
/** One hour to 30 days. */
export const FREQUENCY_CAP_PERIOD_SECONDS = { min: 3_600, max: 30 * 86_400 } as const;
/** How long a dial is kept for the count: the longest period a cap may have, so any cap set later counts right. */
export const NUMBER_DIAL_RETENTION_SECONDS = FREQUENCY_CAP_PERIOD_SECONDS.max;

/** `calls.wait_reason` of a call held back by the cap (later: calling windows, retries). */
export const FREQUENCY_CAP_WAIT_REASON: WaitReason = 'frequency_cap';
/** The alternate number's dial skipped because that number reached the cap (its end's history detail). */
export const FREQUENCY_CAP_SKIP = 'frequency_cap';

function bound(path: PathIssue['path'], value: number, b: { min: number; max: number }): PathIssue[] {
  if (!Number.isInteger(value)) return [{ path, reason: 'Input should be a valid integer' }];
  if (value < b.min) return [{ path, reason: `Input should be greater than or equal to ${b.min}` }];
  if (value > b.max) return [{ path, reason: `Input should be less than or equal to ${b.max}` }];
  return [];
}

/** What is wrong with a cap, at paths under `frequencyCap`. */
export function frequencyCapIssues(cap: FrequencyCap): PathIssue[] {
  return [
    ...bound(['frequencyCap', 'maxCalls'], cap.maxCalls, FREQUENCY_CAP_MAX_CALLS),
    ...bound(['frequencyCap', 'periodSeconds'], cap.periodSeconds, FREQUENCY_CAP_PERIOD_SECONDS),
  ];
}

/** The stored pair as a cap; null when the account has none. */
export function frequencyCapOf(a: { frequencyCapMaxCalls: number | null; frequencyCapPeriodSeconds: number | null }): FrequencyCap | null {
  if (a.frequencyCapMaxCalls === null || a.frequencyCapPeriodSeconds === null) return null;
  return { maxCalls: a.frequencyCapMaxCalls, periodSeconds: a.frequencyCapPeriodSeconds };
}
