// Operator CLI: `npm run cli -- <command>` (also the `callbatch` bin). See `npm run cli -- help`.
import { parseArgs } from 'node:util';
import { commands } from './commands.ts';
import type { Command, CommandIo, Flags } from './command.ts';
import { renderForPeople } from './render.ts';
import { connect } from './transport.ts';

// Every flag but --help, --json, --watch and --all takes a value (settings are spelled `--api-access false`).
export const FLAG_NAMES = [
  'name',
  'email',
  'max-batch-size',
  'max-concurrent-calls',
  'max-call-duration',
  'rate-limit',
  'batch-concurrency',
  'voices',
  'api-access',
  'interruption',
  'recording',
  'account',
  'voice',
  'outcome-keys',
  'provider-agent-id',
  'agent',
  'prompt',
  'provider-agent-version',
  'number',
  'api-key',
  'dial-rate',
  'agent-name',
  'version',
  'csv',
  'did',
  'concurrency',
  'start',
  'status',
  'out',
  'format',
  'reason',
  'page',
  'max-attempts',
  'retry-on',
  'retry-delay',
  'expires-at',
  'calling-window',
  'default-window',
  'enforced-window',
  'frequency-cap',
  'opt-out-key',
  'opt-out-detection',
  'cursor',
  'file',
  'mode',
  'registry-consent-exempt',
  'number-health-webhooks',
  'settings',
  'providers',
  'daily-cap',
  'default',
];
export const SWITCH_NAMES = ['json', 'watch', 'all'];
const FLAG_OPTIONS = {
  ...Object.fromEntries(FLAG_NAMES.map((n) => [n, { type: 'string' as const }])),
  ...Object.fromEntries(SWITCH_NAMES.map((n) => [n, { type: 'boolean' as const }])),
  help: { type: 'boolean' as const, short: 'h' },
};

export interface CliOutput {
  /** The result and streamed output (stdout), written as given. */
  out(text: string): void;
  /** Notes and progress for people (stderr). */
  note?(text: string): void;
  /** True when notes go to a terminal, so progress redraws one line. */
  tty?: boolean;
}

function progressWriter(note: (text: string) => void, tty: boolean): CommandIo['progress'] {
  let drawn = false;
  return (line) => {
    if (line === null) {
      if (drawn && tty) note('\n');
      drawn = false;
      return;
    }
    note(tty ? `\r\x1b[2K${line}` : `${line}\n`);
    drawn = true;
  };
}

/** The commands under the words given (`keys` -> the keys commands, with examples), or all of them. */
function help(words: string[]): string {
  const all = Object.entries(commands);
  const wanted = words.slice(0, 2).join(' ');
  const exact = all.filter(([name]) => name === wanted);
  const under = exact.length ? exact : all.filter(([name]) => words.length > 0 && name.split(' ')[0] === words[0]);
  const shown = under.length > 0 ? under : all;
  const lines = (c: Command) => [`  ${c.usage}`, ...(under.length ? c.examples.map((e) => `      e.g. npm run cli -- ${e}`) : [])];
  return [
    'usage: npm run cli -- <command> [args] [--json]   (--help after any command shows its usage and examples; --json prints the data for scripts)',
    '',
    ...shown.flatMap(([, c]) => lines(c)),
  ].join('\n');
}

const STDIO: CliOutput = {
  out: (s) => process.stdout.write(s),
  note: (s) => process.stderr.write(s.endsWith('\n') || s.startsWith('\r') ? s : s + '\n'),
  tty: process.stderr.isTTY,
};

/** `output` may be a function: the printed result only (tests). */
export async function runCli(argv: string[], output: CliOutput | CliOutput['out'] = STDIO): Promise<number> {
  const { out, note = () => {}, tty = false } = typeof output === 'function' ? { out: output } : output;
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options: FLAG_OPTIONS, strict: true });
  const name = positionals.slice(0, 2).join(' ');
  const command = commands[name];
  const asked = values.help === true || positionals[0] === 'help';
  if (asked || !name) {
    out(help(positionals[0] === 'help' ? positionals.slice(1) : positionals) + '\n');
    return 0;
  }
  if (!command) {
    // A mistake: said first, on stderr, then what there is; a script sees the exit code.
    note(`unknown command: ${name}\n${help(positionals)}\n`);
    return 2;
  }
  const transport = await connect();
  try {
    const io: CommandIo = { subscribe: transport.subscribe, post: transport.post, out, note, progress: progressWriter(note, tty) };
    const result = await command.run(transport.request, positionals.slice(2), values as Flags, io);
    if (result !== undefined) out(((values as Flags).json ? JSON.stringify(result, null, 2) : renderForPeople(result)) + '\n');
    return 0;
  } finally {
    await transport.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runCli(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      process.stderr.write(`error: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    },
  );
}
