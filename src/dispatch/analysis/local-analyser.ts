// Deterministic stand-in for an LLM analyser: simple rules over the transcript and how the call
// ended. Rules key off the phrases the simulator's transcripts use, but only loosely, so real
// provider transcripts still get sensible (if coarse) results.

import { saysOptOut } from '../../domain/opt-out.ts';
import { fnv1a32 } from '../voice/transcript.ts';
import type { Analyser, AnalysisInput, AnalysisResult } from './analyser.ts';

interface Turn {
  speaker: 'agent' | 'user';
  text: string;
}

export function parseTurns(transcript: string): Turn[] {
  const turns: Turn[] = [];
  for (const line of transcript.split(/\r?\n/)) {
    const m = /^\s*(agent|user)\s*:\s*(.*)$/i.exec(line);
    if (m) turns.push({ speaker: m[1].toLowerCase() as Turn['speaker'], text: m[2].trim() });
  }
  return turns;
}

type Signal = 'yes' | 'no' | 'none';

function interestSignal(userText: string): Signal {
  if (/\bnot (really )?interested\b|\bno,? thanks?\b/.test(userText)) return 'no';
  if (/\binterested\b|\btell me more\b|\bsounds (good|great|interesting)\b/.test(userText)) return 'yes';
  return 'none';
}

function callbackSignal(userText: string): Signal {
  if (/\bno need to call\b|\b(don't|do not) call\b/.test(userText)) return 'no';
  if (/\bcall me back\b|\bcall back\b|\bcallback\b/.test(userText)) return 'yes';
  return 'none';
}

// The phrase list the worker also reads (domain/opt-out.ts), so an opt-out key and detection agree.
function optOutSignal(userText: string): Signal {
  return saysOptOut(userText) ? 'yes' : 'no';
}

/** Keys that ask whether the contact opted out (opt_out, do_not_call, dnc, unsubscribe). */
const isOptOutKey = (k: string) => k.includes('optout') || k.includes('donotcall') || k === 'dnc' || k.includes('unsubscribe');

const normKey = (k: string) => k.toLowerCase().replace(/[^a-z0-9]/g, '');
const FALLBACK_VALUES = ['yes', 'no', 'unknown'] as const;

function whoWasCalled(input: AnalysisInput, turns: Turn[]): string {
  if (input.contactName?.trim()) return input.contactName.trim();
  for (const [k, v] of Object.entries(input.contactMetadata)) {
    if (['name', 'fullname', 'contactname'].includes(normKey(k)) && typeof v === 'string' && v.trim()) return v.trim();
  }
  const greeting = turns.find((t) => t.speaker === 'agent');
  const m = greeting && /^(?:hello|hi),?\s+(.+?),\s+this is\b/i.exec(greeting.text);
  if (m && m[1].toLowerCase() !== 'there') return m[1];
  return 'the contact';
}

function howItEnded(callStatus: string, hangupBy: string | null): string {
  if (callStatus === 'completed') {
    if (hangupBy === 'agent') return 'the agent wrapped up the call';
    if (hangupBy === 'user') return 'the contact hung up';
    if (hangupBy === 'system') return 'the system ended the call';
    return 'the call ended';
  }
  if (callStatus === 'no_answer') return 'nobody answered';
  if (callStatus === 'busy') return 'the line was busy';
  return 'the call could not be completed';
}

export function analyseLocally(input: AnalysisInput): AnalysisResult {
  const turns = parseTurns(input.transcript ?? '');
  const userText = turns
    .filter((t) => t.speaker === 'user')
    .map((t) => t.text.toLowerCase())
    .join('\n');
  const talked = userText.length > 0;
  const interest = interestSignal(userText);
  const callback = callbackSignal(userText);
  const who = whoWasCalled(input, turns);
  const ended = howItEnded(input.callStatus, input.hangupBy);

  let summary: string;
  if (!talked) {
    summary = `Called ${who}, but ${ended}; no conversation took place.`;
  } else {
    summary = `Called ${who}: ${turns.length} turns before ${ended}.`;
    const notes: string[] = [];
    if (interest === 'yes') notes.push('was interested in hearing more');
    if (interest === 'no') notes.push('was not interested');
    if (callback === 'yes') notes.push('asked to be called back');
    if (optOutSignal(userText) === 'yes') notes.push('asked not to be called again');
    if (notes.length > 0) summary += ` The contact ${notes.join(' and ')}.`;
  }

  const outcomes: Record<string, string> = {};
  for (const key of input.outcomeKeys) {
    const k = normKey(key);
    if (!talked) outcomes[key] = 'unknown';
    else if (isOptOutKey(k)) outcomes[key] = optOutSignal(userText);
    else if (k.includes('interest')) outcomes[key] = interest === 'yes' ? 'interested' : 'not_interested';
    else if (k.includes('callback')) outcomes[key] = callback === 'yes' ? 'yes' : 'no';
    else if (k.includes('sentiment')) outcomes[key] = interest === 'yes' ? 'positive' : input.hangupBy === 'user' ? 'negative' : 'neutral';
    else outcomes[key] = FALLBACK_VALUES[fnv1a32(`${input.transcript}\u0000${key}`) % FALLBACK_VALUES.length];
  }
  return { summary, outcomes };
}

export function createLocalAnalyser(): Analyser {
  return {
    name: 'local',
    async analyse(input) {
      return analyseLocally(input);
    },
  };
}
