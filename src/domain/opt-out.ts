// Opt-out from the conversation: an agent may name one of its outcome keys as "the contact asked
// not to be called again", and detection (a default key and a phrase list) is on unless the agent
// turns it off; an opted-out call puts every number of its contact on the account's do-not-call
// list (docs/campaigns.md). Pure: which key is allowed, which value and which words count.
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

// Detection on by default (issue 33): an agent that names no key, or whose analysis does not fill
// it, still catches "stop calling me". Two signals besides the agent's own key, both on unless the
// agent turns detection off (`optOutDetection: false`): the default key below in the analysis
// outcomes (a provider's analysis, e.g. Retell's custom_analysis_data, may fill it), and the phrase
// list below in what the contact said. A false positive lists a number that could have been
// called; a miss calls someone who said stop: the list errs toward the first.

/** The outcome key read as an opt-out when detection is on, whatever key the agent names. */
export const DEFAULT_OPT_OUT_KEY = 'opt_out';

/**
 * What a contact says to opt out, matched in the contact's turns (`User:` lines) only, in any case,
 * whole words, apostrophes straight or curly. Reviewed list; docs/campaigns.md repeats it.
 */
export const OPT_OUT_PHRASES = [
  'stop calling',
  'do not call',
  "don't call",
  'dont call',
  'never call',
  'remove me',
  'take me off',
  'put me on your do not call list',
  'unsubscribe',
  'opt out',
  'opt me out',
  'no more calls',
  'lose my number',
  'delete my number',
] as const;

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const PHRASE_PATTERN = new RegExp(`\\b(?:${OPT_OUT_PHRASES.map((p) => escape(p).replace(/ /g, '\\s+')).join('|')})\\b`, 'i');

/** Text bigger than any stored transcript (MAX_TRANSCRIPT_LENGTH) is not read past this. */
const MAX_SCANNED_CHARS = 1_000_000;

/** Whether a contact's line of a transcript says one of the phrases. */
export function saysOptOut(text: string): boolean {
  return PHRASE_PATTERN.test(text.replace(/[\u2018\u2019\u02bc]/g, "'"));
}

/** The contact's turns of a transcript (`User: …` lines, as the simulator and Retell write them). */
export function contactTurns(transcript: string | null | undefined): string[] {
  if (!transcript) return [];
  const out: string[] = [];
  for (const line of transcript.slice(0, MAX_SCANNED_CHARS).split(/\r?\n/)) {
    const m = /^\s*user\s*:\s*(.*)$/i.exec(line);
    if (m) out.push(m[1]);
  }
  return out;
}

/** An agent's opt-out settings as the worker reads them. */
export interface OptOutRule {
  /** The agent's own key (null: none). */
  key: string | null;
  /** The default key and the phrase list (on unless the agent turned it off). */
  detection: boolean;
}

/** Whether a call's analysis and transcript say the contact opted out under the agent's rule. */
export function detectsOptOut(
  rule: OptOutRule,
  outcomes: Readonly<Record<string, unknown>> | null | undefined,
  transcript: string | null | undefined,
): boolean {
  if (optedOut(outcomes, rule.key)) return true;
  if (!rule.detection) return false;
  return optedOut(outcomes, DEFAULT_OPT_OUT_KEY) || contactTurns(transcript).some(saysOptOut);
}

/** An agent with no key and detection off never lists anyone (a create warns: create-warnings.ts). */
export const canDetectOptOuts = (rule: OptOutRule) => rule.key !== null || rule.detection;
