// What every CLI command is, and the readers of its flags, arguments and input files.
import fs from 'node:fs';
import type { GraphQLTransport } from './transport.ts';

export type Flags = Record<string, string | boolean | undefined>;

/** What a command may do besides returning its result. */
export interface CommandIo {
  subscribe: GraphQLTransport['subscribe'];
  /** Bytes to an operator route (registry imports); absent where a command has no server. */
  post?: GraphQLTransport['post'];
  /** Streamed output (an export without --out), to stdout as given. */
  out(text: string): void;
  /** Notes for the person at the terminal (row problems, counts), to stderr. */
  note(text: string): void;
  /** One redrawn status line on a terminal, a line per change elsewhere; null ends it. */
  progress(line: string | null): void;
}

export interface Command {
  usage: string;
  /** Whole command lines (after `npm run cli --`) that `--help` shows; test/foundation/cli-examples.test.ts runs each. */
  examples: string[];
  /** The result is printed (a table, or JSON with --json); undefined prints nothing. */
  run(gql: GraphQLTransport['request'], args: string[], flags: Flags, io: CommandIo): Promise<unknown>;
}

export const list = (v: Flags[string]) =>
  typeof v === 'string'
    ? v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : undefined;
export const int = (v: Flags[string], name: string) => {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`);
  return n;
};
/** Retell agent versions start at 0. */
export const version = (v: Flags[string], name: string) => {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (typeof v !== 'string' || v.trim() === '' || !Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number from 0`);
  return n;
};
export const rate = (v: Flags[string], name: string) => {
  if (v === undefined) return null;
  const n = Number(v);
  if (typeof v !== 'string' || v.trim() === '' || !Number.isFinite(n) || n < 0)
    throw new Error(`--${name} must be a number of calls per second (0 = unpaced)`);
  return n;
};
export const bool = (v: Flags[string], name: string) => {
  if (v === undefined) return undefined;
  if (v === true || v === 'true') return true;
  if (v === 'false') return false;
  throw new Error(`--${name} must be true or false`);
};
const PERIOD_UNITS: Record<string, number> = { '': 1, s: 1, m: 60, h: 3_600, d: 86_400, w: 604_800 };
/** `7/7d`: 7 dials per 7 days (units s, m, h, d, w; none: seconds); `off`: no cap (null); absent: undefined. */
export const frequencyCap = (v: Flags[string], name: string) => {
  if (v === undefined) return undefined;
  if (v === 'off' || v === 'none') return null;
  const m = typeof v === 'string' ? /^\s*(\d{1,9})\s*\/\s*(\d{1,9})\s*([smhdw]?)\s*$/i.exec(v) : null;
  if (!m) throw new Error(`--${name} must be CALLS/PERIOD such as 7/7d (units s, m, h, d, w), or off`);
  return { maxCalls: Number(m[1]), periodSeconds: Number(m[2]) * PERIOD_UNITS[m[3].toLowerCase()] };
};
/** A JSON object given on the command line (`--settings '{"k":"v"}'`); absent: null. */
export const jsonObject = (v: Flags[string], name: string): Record<string, unknown> | null => {
  if (v === undefined) return null;
  let parsed: unknown;
  try {
    parsed = typeof v === 'string' ? JSON.parse(v) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(`--${name} must be a JSON object`);
  return parsed as Record<string, unknown>;
};
/** A JSON array of objects given on the command line (`--providers '[{…}]'`). */
export const jsonArray = (v: Flags[string], name: string): Record<string, unknown>[] => {
  let parsed: unknown;
  try {
    parsed = typeof v === 'string' ? JSON.parse(v) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || !parsed.every((e) => e && typeof e === 'object' && !Array.isArray(e)))
    throw new Error(`--${name} must be a JSON array of objects`);
  return parsed as Record<string, unknown>[];
};
export function need(v: Flags[string] | undefined, name: string): string {
  if (typeof v !== 'string' || !v) throw new Error(`--${name} is required`);
  return v;
}
export function arg(args: string[], i: number, name: string): string {
  if (!args[i]) throw new Error(`<${name}> is required`);
  return args[i];
}

/** Largest CSV file a command reads (held in memory whole): 100k contacts of ~600 bytes fit 8 times over. */
export const MAX_CSV_FILE_BYTES = 512 * 1024 * 1024;

/** The text of the file the flag names, refused before reading when it is larger than MAX_CSV_FILE_BYTES. */
export function csvFileText(v: Flags[string] | undefined, name: string): string {
  const file = need(v, name);
  const { size } = fs.statSync(file);
  if (size > MAX_CSV_FILE_BYTES) throw new Error(`--${name}: ${file} is ${size} bytes; the largest file read is ${MAX_CSV_FILE_BYTES} bytes`);
  return fs.readFileSync(file, 'utf8');
}
