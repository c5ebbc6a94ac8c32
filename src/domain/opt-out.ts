// Opt-out from the conversation: an agent may name one of its outcome keys as "the contact asked
// not to be called again"; a call whose analysis sets it to yes puts the number it reached on the
// account's do-not-call list (docs/campaigns.md). Pure: which key is allowed and which value counts.
import type { PathIssue } from './field-issue.ts';

/** The list entry's `reason`; its `source` is `call:<call_id>` (optOutSource). */
export const OPT_OUT_REASON = 'opted out during call';
export const optOutSource = (callId: string) => `call:${callId}`;

/** The opt-out key must be one of the agent's outcome keys (null: none). */
export function optOutKeyIssues(key: string | null | undefined, outcomeKeys: readonly string[]): PathIssue[] {
  if (key == null || outcomeKeys.includes(key)) return [];
  return [{ path: ['optOutOutcomeKey'], reason: `Value error, must be one of the agent's outcomeKeys` }];
}

/** Yes: the string "yes" or "true" in any case (spaces around ignored), or the boolean true. */
export function isYes(value: unknown): boolean {
  if (value === true) return true;
  if (typeof value !== 'string' || value.length > 8) return false;
  const v = value.trim().toLowerCase();
  return v === 'yes' || v === 'true';
}

/** Whether an analysis result says the contact opted out under the agent's key. */
export function optedOut(outcomes: Readonly<Record<string, unknown>> | null | undefined, key: string | null | undefined): boolean {
  return !!key && !!outcomes && Object.hasOwn(outcomes, key) && isYes(outcomes[key]);
}
