// Operator CLI: `npm run cli -- <command>` (also the `callbatch` bin). See `npm run cli -- help`.
import { parseArgs } from 'node:util';
import { commands, type Flags } from './commands.ts';
import { connect } from './transport.ts';

// Every flag takes a value (booleans are spelled `--api-access false`), so all are declared as strings.
export const FLAG_NAMES = [
  'name', 'email', 'max-batch-size', 'max-concurrent-calls', 'max-call-duration', 'rate-limit', 'batch-concurrency',
  'voices', 'api-access', 'interruption', 'recording', 'account', 'voice', 'outcome-keys', 'provider-agent-id',
  'agent', 'prompt', 'provider-agent-version', 'number', 'api-key', 'dial-rate',
];
const FLAG_OPTIONS = Object.fromEntries(FLAG_NAMES.map((n) => [n, { type: 'string' as const }]));

function help(): string {
  return ['usage: npm run cli -- <command> [args]', '', ...Object.values(commands).map((c) => `  ${c.usage}`)].join('\n');
}

export async function runCli(argv: string[], out: (s: string) => void = (s) => process.stdout.write(s + '\n')): Promise<number> {
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options: FLAG_OPTIONS, strict: true });
  const name = positionals.slice(0, 2).join(' ');
  const command = commands[name];
  if (!command) {
    out(help());
    return name && name !== 'help' ? 2 : 0;
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
