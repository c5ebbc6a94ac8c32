// Builds the simulated conversation. It has to look plausible in a dashboard and carry enough
// signal (interest, callback, who hung up) for the local analyser to extract outcomes, and it
// has to be a pure function of its input so tests and re-runs see the same text.

import { truncateText } from '../../domain/limits.ts';

export interface TranscriptInput {
  agentName: string;
  promptText: string;
  contactName: string | null;
  metadata: Record<string, unknown>;
  /** Who closes the conversation: the agent after the full script, or the user part-way. */
  endedBy: 'agent' | 'user';
  /** The contact asks to be taken off the list instead of answering the pitch (the agent closes). */
  optOut?: boolean;
}

export const AGENT_PREFIX = 'Agent: ';
export const USER_PREFIX = 'User: ';

/** FNV-1a (32-bit): a tiny stable hash for deterministic choices; not for security. */
export function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** First sentence of the prompt, used as the agent's stated goal. */
export function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const m = /^(.+?[.!?])(\s|$)/.exec(flat);
  return (m ? m[1] : flat).trim();
}

// Prompts are written to the agent ("You are ..."); spoken aloud they become first person.
function spokenGoal(prompt: string): string {
  const s = truncateText(firstSentence(prompt), MAX_GOAL_LENGTH)!;
  if (!s) return "I'm calling with a quick update.";
  const firstPerson = s
    .replace(/^you are\b/i, "I'm")
    .replace(/^you're\b/i, "I'm")
    .replace(/^your\b/i, 'My');
  const sentence = /[.!?]$/.test(firstPerson) ? firstPerson : `${firstPerson}.`;
  return firstPerson === s ? `I'm calling about this: ${sentence}` : sentence;
}

/** `phoneNumber`, `phone_number` and `Phone Number` all read as "phone number". */
export function humaniseKey(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_\-.]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
}

export function spokenValue(value: unknown): string {
  return truncateText(fullValue(value), MAX_SPOKEN_VALUE)!;
}

function fullValue(value: unknown): string {
  if (value === null || value === undefined || value === '') return 'not provided';
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.map(spokenValue).join(', ');
  return JSON.stringify(value);
}

// JSON columns may come back with keys reordered (jsonb sorts them), so sort for determinism.
function sortedEntries(metadata: Record<string, unknown>): [string, unknown][] {
  return Object.entries(metadata).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

const CONFIRMATIONS = ["Yes, that's right.", "Yes, that's correct.", 'That is correct.', 'Yep, still the same.'];
const MAX_SEPARATE_FIELD_TURNS = 6;
// A transcript reads back a bounded share of the metadata, whatever the contact carries.
const MAX_FIELDS_READ = 20;
const MAX_SPOKEN_VALUE = 200;
const MAX_GOAL_LENGTH = 300;

export function buildTranscript(input: TranscriptInput): string {
  const seed = fnv1a32(JSON.stringify([input.agentName, input.promptText, input.contactName, sortedEntries(input.metadata)]));
  const name = input.contactName?.trim() || null;
  const lines: string[] = [];
  const agent = (t: string) => lines.push(AGENT_PREFIX + t);
  const user = (t: string) => lines.push(USER_PREFIX + t);

  agent(`Hello ${name ?? 'there'}, this is ${input.agentName}. ${spokenGoal(input.promptText)}`);
  user(name ? `Hi, yes, this is ${name}. What is it about?` : 'Hi, who is this? What is it about?');

  const fields = sortedEntries(input.metadata);
  if (fields.length > 0) {
    const separate = fields.slice(0, MAX_SEPARATE_FIELD_TURNS);
    separate.forEach(([k, v], i) => {
      const intro = i === 0 ? 'Before we go on, I would like to confirm a few details we have on file. ' : '';
      agent(`${intro}Your ${humaniseKey(k)} is ${spokenValue(v)}, is that right?`);
      user(CONFIRMATIONS[(seed + i) % CONFIRMATIONS.length]);
    });
    const rest = fields.slice(MAX_SEPARATE_FIELD_TURNS, MAX_FIELDS_READ);
    if (rest.length > 0) {
      agent(`I also have ${rest.map(([k, v]) => `${humaniseKey(k)}: ${spokenValue(v)}`).join('; ')}. Is all of that still correct?`);
      user('Yes, all of that is still correct.');
    }
  }

  if (input.optOut) {
    agent('Would you be interested in hearing more about it?');
    user('No. Please take me off your list and do not call me again.');
    agent(`Understood, we will not call you again${name ? `, ${name}` : ''}. Goodbye!`);
    return lines.join('\n');
  }

  if (input.endedBy === 'user') {
    agent('Great. Do you have a couple of minutes to go over the details?');
    user("Sorry, I'm busy right now and have to go. Bye.");
    return lines.join('\n');
  }

  const interested = (seed & 1) === 1;
  const wantsCallback = (seed & 2) === 2;
  agent('Would you be interested in hearing more about it?');
  user(interested ? "Yes, I'm interested. Tell me more." : "No, I'm not interested, thanks.");
  const ack = interested ? 'Wonderful, I will note that so a colleague can follow up with the details. ' : 'I understand. ';
  agent(`${ack}Would you like us to call you back at a more convenient time?`);
  user(wantsCallback ? 'Yes, please call me back later this week.' : 'No need to call me back.');
  agent(`Thank you for your time${name ? `, ${name}` : ''}. Goodbye!`);
  return lines.join('\n');
}

/** Keeps the first share of the conversation, for calls cut short by a hangup. */
export function truncateTranscript(transcript: string, fraction: number): string {
  const lines = transcript.split('\n');
  const keep = Math.min(lines.length, Math.max(1, Math.ceil(lines.length * Math.min(1, Math.max(0, fraction)))));
  return lines.slice(0, keep).join('\n');
}
