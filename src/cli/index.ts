// Operator CLI: `npm run cli -- <command>` (also the `callbatch` bin). See `npm run cli -- help`.
import { parseArgs } from 'node:util';
import { commands, type Flags } from './commands.ts';
import { connect } from './transport.ts';

// Every flag but --help takes a value (booleans are spelled `--api-access false`).
export const FLAG_NAMES = [
  'name', 'email', 'max-batch-size', 'max-concurrent-calls', 'max-call-duration', 'rate-limit', 'batch-concurrency',
  'voices', 'api-access', 'interruption', 'recording', 'account', 'voice', 'outcome-keys', 'provider-agent-id',
  'agent', 'prompt', 'provider-agent-version', 'number', 'api-key', 'dial-rate',
];
const FLAG_OPTIONS = {
  ...Object.fromEntries(FLAG_NAMES.map((n) => [n, { type: 'string' as const }])),
  help: { type: 'boolean' as const, short: 'h' },
};

/** The commands under the words given (`keys` -> the keys commands), or all of them. */
function help(words: string[]): string {
  const all = Object.entries(commands);
  const under = all.filter(([name]) => words.length > 0 && name.startsWith(words.join(' ')));
  const shown = under.length > 0 ? under : all;
  return ['usage: npm run cli -- <command> [args]   (--help after any command shows its usage)', '', ...shown.map(([, c]) => `  ${c.usage}`)].join('\n');
}

export async function runCli(argv: string[], out: (s: string) => void = (s) => process.stdout.write(s + '\n')): Promise<number> {
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options: FLAG_OPTIONS, strict: true });
  const name = positionals.slice(0, 2).join(' ');
  const command = commands[name];
  const asked = values.help === true || positionals[0] === 'help';
  if (!command || asked) {
    out(help(positionals[0] === 'help' ? positionals.slice(1) : positionals));
    return asked || !name ? 0 : 2;
  }
  const transport = await connect();
  try {
    const result = await command.run(transport.request, positionals.slice(2), values as Flags);
    out(JSON.stringify(result, null, 2));
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
