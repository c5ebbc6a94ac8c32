// Every example that `--help` shows runs, as written, against a real `npm start` (demo account,
// worker, simulator calls of 3 s: a started batch is still running when the pause lands): placeholders such as `acc_…` and `sched_…` are the ids an
// operator would paste. Also: unknown commands, batch operations, agents by name, refusals by line.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/index.ts';
import { commands } from '../../src/cli/commands.ts';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { tempDataDir } from '../helpers/data-dir.ts';

const dataDir = tempDataDir('cbs-cli-examples-');
const files = path.join(dataDir, 'files');
let server: ServerProcess;
const saved = { ...process.env };

/** Shell words of an example: single and double quotes group, `$RETELL_API_KEY` is the test's stand-in. */
function words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]);
}

async function cli(argv: string[]): Promise<{ code: number; out: string; notes: string }> {
  let out = '';
  let notes = '';
  // As the bin writes notes: a line each.
  const code = await runCli(argv, { out: (s) => (out += s), note: (s) => (notes += s.endsWith('\n') ? s : `${s}\n`) });
  return { code, out, notes };
}
const json = async (...argv: string[]) => {
  const r = await cli([...argv, '--json']);
  expect(r.code).toBe(0);
  return JSON.parse(r.out);
};

beforeAll(async () => {
  server = await startServerProcess({
    DATA_DIR: dataDir,
    DATABASE_URL: '',
    ADMIN_TOKEN: '',
    SEED_DEMO: 'true',
    SIM_CALL_MS: '3000',
    WORKER_POLL_MS: '50',
  });
  Object.assign(process.env, { CLI_SERVER_URL: server.url, DATA_DIR: dataDir, ADMIN_TOKEN: '', LOG_LEVEL: 'silent' });
  delete process.env.DATABASE_URL;
  fs.mkdirSync(files, { recursive: true });
  // Numbers ending 5-9: the simulator completes them (0, 1, 2 end as no answer, busy, failed).
  fs.writeFileSync(path.join(files, 'contacts.csv'), ['contact_id,name,phone_number', 'c1,Ada,+14155550105', 'c2,Alan,+14155550106'].join('\n'));
  fs.writeFileSync(path.join(files, 'do-not-call.csv'), ['phone_number', '+14155550160', '+14155550161'].join('\n'));
  // The registry commands' examples: an area-code file and reassigned-number results.
  fs.writeFileSync(path.join(files, 'registry-201.txt'), ['2015550160', '2015550161'].join('\n'));
  fs.writeFileSync(path.join(files, 'reassigned.csv'), ['2015550170,2026-01-15'].join('\n'));
}, 90_000);

afterAll(async () => {
  process.env = saved;
  server?.child.kill('SIGTERM');
  await server?.waitForExit();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('the CLI help examples', () => {
  it('every command shows at least one example under --help, and each names its command', async () => {
    for (const [name, c] of Object.entries(commands)) {
      expect(c.examples.length, name).toBeGreaterThan(0);
      for (const e of c.examples) expect(words(e).slice(0, 2).join(' '), e).toBe(name);
      const { code, out } = await cli([...name.split(' '), '--help']);
      expect(code).toBe(0);
      for (const e of c.examples) expect(out).toContain(`e.g. npm run cli -- ${e}`);
    }
  });

  it('each example runs as written against the running server', async () => {
    const { adminAccounts } = await json('accounts', 'list');
    const demo = adminAccounts.find((a: { name: string }) => a.name === 'Demo Account');
    const { agents } = await json('agents', 'list', '--account', demo.id);
    const agent = agents.find((a: { name: string }) => a.name === 'Demo Agent');
    const { promptVersions } = await json('versions', 'list', '--account', demo.id, '--agent', agent.id);
    const ids: Record<string, string> = {
      'acc_…': demo.id,
      'agt-…': agent.id,
      'pmt-…': promptVersions[0].id,
      'sched_…': '',
      'key_…': '',
      'did_…': '',
    };
    const paste = (e: string) =>
      words(e).map((w) => {
        const id = ids[w];
        if (id !== undefined) return id;
        if (w === '$RETELL_API_KEY') return 'key_example_retell_0123456789';
        return /^[\w-]+\.(csv|txt)$/.test(w) ? path.join(files, w) : w;
      });
    const ran = new Set<string>();
    const runExamples = async (name: string, after?: (result: { out: string; notes: string }, example: string) => Promise<void> | void) => {
      for (const example of commands[name].examples) {
        const argv = paste(example);
        const result = await cli([...argv, '--json']);
        expect(result.code, `${example}\n${result.notes}`).toBe(0);
        await after?.(result, example);
      }
      ran.add(name);
    };
    const statusOf = async (id: string) => (await json('batches', 'show', id, '--account', demo.id)).batch.status;

    for (const name of ['accounts list', 'accounts create', 'accounts setup', 'accounts update']) await runExamples(name);
    await runExamples('keys create', ({ out }) => {
      ids['key_…'] = JSON.parse(out).adminCreateApiKey.id;
    });
    for (const name of [
      'keys list',
      'keys revoke',
      'keys rotate',
      'agents create',
      'agents update',
      'agents list',
      'versions create',
      'versions list',
    ]) {
      await runExamples(name);
    }
    await runExamples('dids add', ({ out }) => {
      ids['did_…'] = JSON.parse(out).addDidNumber.id;
    });
    for (const name of [
      'dids set',
      'dids list',
      'dids health',
      'dids flag',
      'dids unflag',
      'voices set',
      'voices list',
      // A route, then back to one provider (provider set's last example: the simulator) for the batches below.
      'provider route',
      'provider set',
      'webhooks secret',
    ])
      await runExamples(name);
    for (const name of ['suppressions add', 'suppressions import', 'suppressions list', 'suppressions remove']) await runExamples(name);
    // Over HTTP to the server's operator route, in parts (registry-commands.ts).
    await runExamples('registry import', ({ out }) => {
      expect(JSON.parse(out)).toMatchObject({ files: 1, numbers: 2, badLines: 0 });
    });
    await runExamples('registry reassigned', ({ out }) => {
      expect(JSON.parse(out)).toMatchObject({ files: 1, numbers: 1, badLines: 0 });
    });

    // The first create makes a manual batch: start, pause, resume, then follow it to the end.
    await runExamples('batches create', ({ out }, example) => {
      if (example.includes('--start manual')) ids['sched_…'] = JSON.parse(out).batchId;
    });
    const batch = ids['sched_…'];
    for (const name of ['batches list', 'batches show']) await runExamples(name);
    await runExamples('batches start');
    await runExamples('batches pause', async () => {
      expect(await statusOf(batch)).toBe('paused');
    });
    await runExamples('batches resume');
    await runExamples('batches watch', ({ out }) => {
      expect(JSON.parse(out)).toMatchObject({ batchId: batch, status: 'completed' });
    });
    await runExamples('batches export');
    expect(fs.readFileSync(path.join(files, 'results.csv'), 'utf8')).toMatch(/^call_id,batch_id,/);
    // cancel needs a batch that has not ended: a new manual one.
    const manual = commands['batches create'].examples.find((e) => e.includes('--start manual'))!;
    ids['sched_…'] = JSON.parse((await cli([...paste(manual), '--json'])).out).batchId;
    await runExamples('batches cancel', async () => {
      expect(await statusOf(ids['sched_…'])).toBe('cancelled');
    });
    expect([...ran].sort()).toEqual(Object.keys(commands).sort());
  }, 120_000);
});

describe('the CLI lines the docs show', () => {
  const root = path.resolve(import.meta.dirname, '../..');
  const docs = [
    'README.md',
    ...fs
      .readdirSync(path.join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  const lines = docs.flatMap((doc) =>
    fs
      .readFileSync(path.join(root, doc), 'utf8')
      .split('\n')
      .flatMap((line) => [...line.matchAll(/npm run cli -- ([^`\n#]+)/g)].map((m) => ({ doc, text: m[1].trim() }))),
  );
  const ID_PREFIXES = ['acc_', 'key_', 'agt-', 'pmt-', 'did_', 'sched_', 'call_'];

  it('name commands that exist, with flags those commands take and ids of the real prefixes', () => {
    expect(lines.length).toBeGreaterThan(30);
    const names = Object.keys(commands);
    for (const { doc, text } of lines) {
      const [group, sub] = words(text);
      if (!/^[a-z|]+$/.test(group)) continue; // `--help`, `<command>`, `…`
      if (sub === undefined || sub.startsWith('-')) continue; // `keys --help`
      const subs = sub.split('|');
      for (const s of subs) {
        const name = `${group} ${s}`;
        if (group.includes('|')) continue;
        expect(names, `${doc}: ${text}`).toContain(name);
        for (const [, flag] of text.matchAll(/--([a-z][a-z-]*)/g)) {
          if (flag === 'json' || flag === 'help') continue;
          expect(commands[name].usage, `${doc}: ${text}`).toContain(`--${flag}`);
        }
      }
      for (const [placeholder] of text.matchAll(/\b[a-z]+[-_]…/g)) expect(ID_PREFIXES, `${doc}: ${text}`).toContain(placeholder.slice(0, -1));
    }
  });
});

describe('the CLI for a first-day operator', () => {
  it('an unknown command says so first, on stderr, then the usage; exit 2', async () => {
    const { code, out, notes } = await cli(['batches', 'frobnicate']);
    expect(code).toBe(2);
    expect(out).toBe('');
    expect(notes.split('\n')[0]).toBe('unknown command: batches frobnicate');
    expect(notes).toContain('batches start <batch-id> --account ID');
    expect((await cli(['nonsense'])).notes.split('\n')[0]).toBe('unknown command: nonsense');
  });

  it('a refused create names each problem by CSV line, in line order, snake_case, under a clear heading', async () => {
    const { adminAccounts } = await json('accounts', 'list');
    const account = adminAccounts.find((a: { name: string }) => a.name === 'Demo Account').id;
    const csv = path.join(files, 'refused.csv');
    fs.writeFileSync(csv, ['phone_number,name', '+14155550102,' + 'n'.repeat(300), '+1415555010' + '9'.repeat(60) + ',Ann'].join('\n'));
    const error = await runCli(['batches', 'create', '--account', account, '--agent', 'Demo Agent', '--version', 'v1', '--csv', csv], {
      out: () => {},
      note: () => {},
    }).then(
      () => null,
      (e: Error) => e.message,
    );
    expect(error).toBe(
      [
        'The server refused the batch (nothing was created):',
        '  line 2: name: String should have at most 255 characters',
        '  line 3: phone_number: String should have at most 64 characters',
      ].join('\n'),
    );
  });

  it('a create by agent and version name; its problems in line order; a national number gets the country-code hint', async () => {
    const { adminAccounts } = await json('accounts', 'list');
    const account = adminAccounts.find((a: { name: string }) => a.name === 'Demo Account').id;
    const csv = path.join(files, 'mixed.csv');
    fs.writeFileSync(csv, ['contact_id,phone_number', 'a,4155550182', 'b,+1415', 'c,+14155550107', 'a,+14155550108'].join('\n'));
    const { code, out, notes } = await cli([
      'batches',
      'create',
      '--account',
      account,
      '--agent',
      'Demo Agent',
      '--version',
      'v1',
      '--csv',
      csv,
      '--start',
      'manual',
      '--json',
    ]);
    expect(code).toBe(0);
    const created = JSON.parse(out);
    expect(created).toMatchObject({ acceptedContacts: 1, rejectedContacts: 1, leftOut: 2 });
    const lines = notes.split('\n').filter((l) => l.startsWith('line '));
    expect(lines.map((l) => Number(/^line (\d+)/.exec(l)![1]))).toEqual([2, 3, 5]);
    expect(lines[0]).toBe(
      'line 2: phone_number: Invalid phone number (no country code? +14155550182 is valid: write numbers as +<country code><number>) (rejected)',
    );
    expect(notes).toContain(`batch ${created.batchId} waits: start it with npm run cli -- batches start ${created.batchId} --account ${account}`);
    // An agent name that is not there is the server's not-found, naming it.
    await expect(
      runCli(['batches', 'create', '--account', account, '--agent', 'No Such Agent', '--version', 'v1', '--csv', csv], {
        out: () => {},
        note: () => {},
      }),
    ).rejects.toThrow("Agent named 'No Such Agent' not found");
    // A manual batch with --watch is refused before anything is created, saying how to start it.
    await expect(
      runCli(['batches', 'create', '--account', account, '--agent', 'Demo Agent', '--version', 'v1', '--csv', csv, '--start', 'manual', '--watch'], {
        out: () => {},
      }),
    ).rejects.toThrow('`batches start <batch-id> --account …`');
  });
});
