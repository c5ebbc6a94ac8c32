// The CLI for people and scripts: tables by default and --json, an account ready to call in one
// command, a batch created from a CSV file and watched to its end, its results exported as CSV.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/index.ts';
import { renderForPeople } from '../../src/cli/render.ts';
import { exportCells } from '../../src/rest/results-csv.ts';
import { parseCsv } from '../../src/csv/csv.ts';
import { CALL_RECORD_FIELDS } from '../../src/services/representations.ts';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { tempDataDir } from '../helpers/data-dir.ts';

describe('CLI output for people', () => {
  it('a list of records is a table with dotted columns for nested fields; long cells are clipped', () => {
    const text = renderForPeople({
      adminAccounts: [
        { id: 'acc_1', name: 'Acme', voices: ['alloy', 'verse'], limits: { maxBatchSize: 10 } },
        { id: 'acc_2', name: 'x'.repeat(80), voices: [], limits: { maxBatchSize: null } },
      ],
    });
    const [header, first, second] = text.split('\n');
    expect(header.split(/\s{2,}/)).toEqual(['id', 'name', 'voices', 'limits.maxBatchSize']);
    expect(first.split(/\s{2,}/)).toEqual(['acc_1', 'Acme', 'alloy,verse', '10']);
    expect(second).toContain('x'.repeat(47) + '…');
    expect(second.trimEnd().endsWith('-')).toBe(true);
  });

  it('one record is `name  value` lines; a scalar is itself; nothing is (none)', () => {
    expect(renderForPeople({ createAgent: { id: 'agt_1', outcomeKeys: ['a', 'b'] } })).toBe('id           agt_1\noutcomeKeys  a,b');
    expect(renderForPeople({ adminRevokeApiKey: true })).toBe('true');
    expect(renderForPeople({ agents: [] })).toBe('(none)');
  });

  it('exported cells that a spreadsheet would run as a formula start with a quote; numbers and phone numbers do not', () => {
    const [row] = parseCsv(
      exportCells([
        [
          '=HYPERLINK("x")',
          '@SUM(1)',
          '+14155550101',
          '-3',
          '-x',
          "-2+3+cmd|' /C calc'!A0",
          '+.5+x',
          '1e5',
          '-.25',
          'plain, with comma',
          null,
          { a: 'b' },
        ],
      ]),
    );
    expect(row.cells).toEqual([
      `'=HYPERLINK("x")`,
      `'@SUM(1)`,
      '+14155550101',
      '-3',
      `'-x`,
      `'-2+3+cmd|' /C calc'!A0`,
      `'+.5+x`,
      '1e5',
      '-.25',
      'plain, with comma',
      '',
      '{"a":"b"}',
    ]);
  });

  it('control characters of stored text never reach the terminal as such', () => {
    expect(renderForPeople({ agents: [{ name: 'ok\x1b]52;c;aGk=\x07\r\x1b[2Kfake' }] })).toBe('name\nok\\x1b]52;c;aGk=\\x07\\x0d\\x1b[2Kfake');
    const [row] = parseCsv(exportCells([['line one\nline two\tand a tab', 'bell\x07 and \x1b[2K']]));
    expect(row.cells).toEqual(['line one\nline two\tand a tab', 'bell\ufffd and \ufffd[2K']);
  });
});

describe('CLI batches against the running server', () => {
  const dataDir = tempDataDir('cbs-cli-batches-');
  let server: ServerProcess;
  let account = '';
  let apiKey = '';
  let agentId = '';
  let versionId = '';
  let batchId = '';
  const saved = { ...process.env };

  async function run(...argv: string[]): Promise<{ out: string; notes: string }> {
    let out = '';
    let notes = '';
    // As the bin writes notes: a line each.
    const code = await runCli(argv, { out: (s) => (out += s), note: (s) => (notes += s.endsWith('\n') ? s : `${s}\n`) });
    expect(code).toBe(0);
    return { out, notes };
  }
  const json = async (...argv: string[]) => JSON.parse((await run(...argv, '--json')).out);

  beforeAll(async () => {
    server = await startServerProcess({ DATA_DIR: dataDir, ADMIN_TOKEN: '', SEED_DEMO: 'false', SIM_CALL_MS: '150', WORKER_POLL_MS: '50' });
    // The CLI finds the server and its operator token the way an operator's shell would.
    Object.assign(process.env, { CLI_SERVER_URL: server.url, DATA_DIR: dataDir, ADMIN_TOKEN: '', LOG_LEVEL: 'silent' });
  }, 60_000);
  afterAll(async () => {
    process.env = saved;
    server.child.kill('SIGTERM');
    await server.waitForExit();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('accounts setup: one command leaves an account ready to call, and its key works', async () => {
    const setup = await json(
      'accounts',
      'setup',
      '--name',
      'Acme',
      '--email',
      'ops@acme.test',
      '--voices',
      'alloy,verse',
      '--number',
      '+1 415 555 0190',
    );
    expect(setup).toMatchObject({ voice: 'alloy', didNumber: '+14155550190' });
    ({ accountId: account, apiKey, agentId, versionId } = setup);
    const me = await fetch(`${server.url}/api/v1/public/me`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(me.status).toBe(200);
    // For people: one record as lines, the key among them.
    const table = (await run('agents', 'list', '--account', account)).out;
    expect(table.split('\n')[0].split(/\s{2,}/)).toEqual(['id', 'name', 'voice', 'outcomeKeys', 'optOutOutcomeKey', 'recordingEnabled']);
    expect(table).toContain(agentId);
  }, 60_000);

  it('batches create --csv --watch: bad rows are named by line, the counters are followed to the end', async () => {
    const csv = path.join(dataDir, 'contacts.csv');
    fs.writeFileSync(
      csv,
      [
        'contact_id,name,phone_number,plan',
        'c1,Ada,+14155550101,gold',
        'c2,Alan,+1415,silver',
        'c3,Grace,+14155550103,',
        'c1,Dup,+14155550104,',
      ].join('\n'),
    );
    const { out, notes } = await run(
      'batches',
      'create',
      '--account',
      account,
      '--agent',
      agentId,
      '--version',
      versionId,
      '--csv',
      csv,
      '--watch',
      '--json',
    );
    expect(notes).toContain('line 3: phone_number: String should have at least 8 characters (left out)');
    expect(notes).toContain('line 5: contact_id: Duplicate contact_id (first on line 2) (left out)');
    const final = JSON.parse(out);
    batchId = final.batchId;
    expect(final).toMatchObject({ status: 'completed', acceptedContacts: 2, queued: 0, inProgress: 0 });
    expect(final.completed + final.failed + final.cancelled).toBe(2);
    // Not a terminal: one progress line per change, the last one the final counters.
    const lines = notes.split('\n').filter((l) => l.startsWith(batchId));
    expect(lines.at(-1)).toMatch(/\[#{24}\] 2\/2 completed/);
  }, 60_000);

  it('refuses --watch for a manual batch, which would wait for ever, before creating anything', async () => {
    await expect(
      runCli(
        [
          'batches',
          'create',
          '--account',
          account,
          '--agent',
          agentId,
          '--version',
          versionId,
          '--csv',
          'unused.csv',
          '--start',
          'manual',
          '--watch',
        ],
        { out: () => {} },
      ),
    ).rejects.toThrow('--watch follows a batch that starts now');
  });

  it('contacts the server rejects are named by their CSV line', async () => {
    const csv = path.join(dataDir, 'rejected.csv');
    fs.writeFileSync(csv, ['phone_number', '+14155550111', 'not-a-phone-number'].join('\n'));
    const { out, notes } = await run(
      'batches',
      'create',
      '--account',
      account,
      '--agent',
      agentId,
      '--version',
      versionId,
      '--csv',
      csv,
      '--start',
      'manual',
      '--json',
    );
    expect(JSON.parse(out)).toMatchObject({ acceptedContacts: 1, rejectedContacts: 1, leftOut: 0 });
    expect(notes).toMatch(/^line 3: phone_number: .+ \(rejected\)$/m);
  }, 60_000);

  it("batches create with a retry policy and an expiry; batches show prints them; a bad value is the server's detail", async () => {
    const csv = path.join(dataDir, 'retry.csv');
    fs.writeFileSync(csv, ['phone_number,sim', '+14155550121,"busy,completed"'].join('\n'));
    const expires = new Date(Date.now() + 86_400_000).toISOString();
    const created = await json(
      'batches',
      'create',
      '--account',
      account,
      '--agent',
      agentId,
      '--version',
      versionId,
      '--csv',
      csv,
      '--start',
      'manual',
      '--max-attempts',
      '3',
      '--retry-on',
      'busy,voicemail',
      '--retry-delay',
      '120',
      '--expires-at',
      expires,
    );
    const shown = await json('batches', 'show', created.batchId, '--account', account);
    expect(shown.batch).toMatchObject({ retry: { maxAttempts: 3, on: ['busy', 'voicemail'], delaySeconds: 120 }, expiresAt: expires });
    await expect(
      runCli(['batches', 'create', '--account', account, '--agent', agentId, '--version', versionId, '--csv', csv, '--max-attempts', '11'], {
        out: () => {},
        note: () => {},
      }),
    ).rejects.toThrow('The server refused the batch (nothing was created):\n  retry.max_attempts: Input should be less than or equal to 10');
    await expect(
      runCli(['batches', 'create', '--account', account, '--agent', agentId, '--version', versionId, '--csv', csv, '--retry-on', 'busy'], {
        out: () => {},
        note: () => {},
      }),
    ).rejects.toThrow('--retry-on and --retry-delay go with --max-attempts');
  }, 60_000);

  it('batches list and show, as tables', async () => {
    const list = (await run('batches', 'list', '--account', account)).out;
    expect(list.split('\n')[0]).toMatch(/^id\s+status\s+totalContacts/);
    expect(list).toContain(batchId);
    const show = (await run('batches', 'show', batchId, '--account', account)).out;
    expect(show).toMatch(/^status\s+completed$/m);
  }, 60_000);

  it('batches export: the REST results as CSV, column for column', async () => {
    const file = path.join(dataDir, 'results.csv');
    const { notes } = await run('batches', 'export', batchId, '--account', account, '--out', file);
    expect(notes).toContain(`2 calls exported to ${file}`);
    const [header, ...rows] = parseCsv(fs.readFileSync(file, 'utf8'));
    expect(header.cells).toEqual([...CALL_RECORD_FIELDS]);
    const rest = await fetch(`${server.url}/api/v1/public/call-batches/${batchId}/results`, { headers: { authorization: `Bearer ${apiKey}` } }).then(
      (r) => r.json() as Promise<any>,
    );
    expect(rows.map((r) => r.cells)).toEqual(
      rest.data.items.map((item: Record<string, unknown>) =>
        CALL_RECORD_FIELDS.map((k) => (item[k] === null ? '' : typeof item[k] === 'object' ? JSON.stringify(item[k]) : String(item[k]))),
      ),
    );
    // GET …/results.csv writes the same file (recording links differ only in their expiry).
    const csv = await fetch(`${server.url}/api/v1/public/call-batches/${batchId}/results.csv`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const unsigned = (text: string) => text.replace(/\?expires=\d+&signature=[\w-]+/g, '');
    expect(unsigned(await csv.text())).toBe(unsigned(fs.readFileSync(file, 'utf8')));
    // A failed export leaves no file behind (nor a half one).
    const missing = path.join(dataDir, 'missing.csv');
    await expect(
      runCli(['batches', 'export', 'sched_0123456789abcdef0123456789abcdef', '--account', account, '--out', missing], { out: () => {} }),
    ).rejects.toThrow(/not found/i);
    expect(fs.existsSync(missing) || fs.existsSync(`${missing}.partial`)).toBe(false);
    // Without --out, the CSV is the command's output.
    const printed = (await run('batches', 'export', batchId, '--account', account, '--format', 'csv')).out;
    expect(parseCsv(printed)).toHaveLength(3);
    await expect(runCli(['batches', 'export', batchId, '--account', account, '--format', 'xlsx'], { out: () => {} })).rejects.toThrow(
      '--format: csv is the only export format',
    );
  }, 60_000);
});
