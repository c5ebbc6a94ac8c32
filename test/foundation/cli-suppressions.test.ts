// Operator CLI: the do-not-call list on the data dir directly (no server): add, import a CSV file
// in requests of the add limit with rows named by line, list as a table or JSON (by page, by cursor past
// the 10,000 numbers page numbers reach, or every page streamed), remove.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/index.ts';
import { tempDataDir } from '../helpers/data-dir.ts';

const dataDir = tempDataDir('cbs-cli-suppressions-');
const saved = { ...process.env };

async function run(...argv: string[]): Promise<{ out: string; notes: string }> {
  let out = '';
  let notes = '';
  const code = await runCli(argv, { out: (s) => (out += s), note: (s) => (notes += s.endsWith('\n') ? s : `${s}\n`) });
  expect(code).toBe(0);
  return { out, notes };
}
const json = async (...argv: string[]) => JSON.parse((await run(...argv, '--json')).out);

beforeAll(() => {
  // PORT 1: nothing answers there, so the CLI opens the data dir itself.
  Object.assign(process.env, {
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    SEED_DEMO: 'false',
    PORT: '1',
    ADMIN_TOKEN: 'cli-suppressions-admin-0123456',
  });
  delete process.env.DATABASE_URL;
  delete process.env.CLI_SERVER_URL;
});
afterAll(() => {
  process.env = saved;
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('suppressions commands', () => {
  let account = '';
  const number = (i: number) => `+1415${2_000_000 + i}`;

  it('add: newly added and already listed numbers are counted; a reason over 500 characters is refused first', async () => {
    account = (await json('accounts', 'create', '--name', 'DNC Co', '--email', 'dnc@example.test')).adminCreateAccount.account.id;
    expect(await json('suppressions', 'add', '--account', account, '--number', '+14155550101', '--reason', 'asked')).toEqual({
      added: 1,
      alreadyListed: 0,
    });
    expect(await json('suppressions', 'add', '--account', account, '--number', '+1 415 555 0101,+14155550102')).toEqual({
      added: 1,
      alreadyListed: 1,
    });
    await expect(
      runCli(['suppressions', 'add', '--account', account, '--number', '+14155550103', '--reason', 'x'.repeat(501)], { out: () => {} }),
    ).rejects.toThrow('--reason must have at most 500 characters');
    await expect(runCli(['suppressions', 'add', '--account', account, '--number', 'nope'], { out: () => {} })).rejects.toThrow(
      'Invalid phone number',
    );
  }, 60_000);

  it('import: 1,000 numbers a request with progress, bad rows named by line, totals at the end', async () => {
    const csv = path.join(dataDir, 'dnc.csv');
    const rows = Array.from({ length: 2_500 }, (_, i) => `Person ${i},${number(i)}`);
    // Line 2 is listed already; lines 2503..2505: a bad number, no number, a repeat of line 3.
    fs.writeFileSync(csv, ['name,Phone Number', 'Ada,+14155550101', ...rows, 'Bad,+1415', 'Empty,', `Again,${number(0)}`].join('\n'));
    const { out, notes } = await run('suppressions', 'import', '--account', account, '--csv', csv, '--reason', 'opt-out list', '--json');
    expect(JSON.parse(out)).toEqual({ added: 2_500, alreadyListed: 1, rejected: 2, duplicateRows: 1 });
    expect(notes).toContain('line 2503: phone_number: Invalid phone number (rejected)');
    expect(notes).toContain('line 2504: phone_number: no phone number (rejected)');
    // Not a terminal: a progress line per request of at most 1,000.
    expect(notes.split('\n').filter((l) => l.startsWith('suppressions:'))).toEqual([
      'suppressions: 1000/2501 sent, 999 added, 1 already listed',
      'suppressions: 2000/2501 sent, 1999 added, 1 already listed',
      'suppressions: 2501/2501 sent, 2500 added, 1 already listed',
    ]);
    const listed = await json('suppressions', 'list', '--account', account, '--number', number(2_499));
    expect(listed).toEqual([{ phoneNumber: number(2_499), reason: 'opt-out list', source: 'cli', createdAt: expect.any(String) }]);
  }, 120_000);

  it('import: without a phone_number column the first column is read, a first line without digits being its header', async () => {
    const csv = path.join(dataDir, 'plain.csv');
    fs.writeFileSync(csv, ['phone', '+14155550150', '+14155550151'].join('\n'));
    expect(await json('suppressions', 'import', '--account', account, '--csv', csv)).toEqual({
      added: 2,
      alreadyListed: 0,
      rejected: 0,
      duplicateRows: 0,
    });
    fs.writeFileSync(csv, ['+14155550152', '+14155550150'].join('\n'));
    expect(await json('suppressions', 'import', '--account', account, '--csv', csv)).toEqual({
      added: 1,
      alreadyListed: 1,
      rejected: 0,
      duplicateRows: 0,
    });
  }, 60_000);

  it('list is a table for people; remove takes a number off, and a number not listed is an error', async () => {
    const { out } = await run('suppressions', 'list', '--account', account, '--number', '+14155550101');
    const [header, row] = out.trim().split('\n');
    expect(header.split(/\s{2,}/)).toEqual(['phoneNumber', 'reason', 'source', 'createdAt']);
    expect(row.split(/\s{2,}/).slice(0, 3)).toEqual(['+14155550101', 'asked', 'cli']);
    const page = await run('suppressions', 'list', '--account', account);
    const next = /page 1: 200 of 2505; next page: --cursor (\S+)/.exec(page.notes)?.[1];
    expect(next).toBeDefined();
    // The cursor reads the page --page 2 reads.
    expect(await json('suppressions', 'list', '--account', account, '--cursor', next!)).toEqual(
      await json('suppressions', 'list', '--account', account, '--page', '2'),
    );

    expect(await json('suppressions', 'remove', '--account', account, '--number', '+1 415 555 0101')).toEqual({ removed: '+14155550101' });
    expect((await run('suppressions', 'list', '--account', account, '--number', '+14155550101')).out.trim()).toBe('(none)');
    await expect(runCli(['suppressions', 'remove', '--account', account, '--number', '+14155550101'], { out: () => {} })).rejects.toThrow();
  }, 60_000);

  it('list --all writes every number past the 10,000 page numbers reach, one page held at a time', async () => {
    const csv = path.join(dataDir, 'many.csv');
    fs.writeFileSync(csv, ['phone_number', ...Array.from({ length: 8_000 }, (_, i) => number(10_000 + i))].join('\n'));
    expect(await json('suppressions', 'import', '--account', account, '--csv', csv)).toMatchObject({ added: 8_000 });
    const total = 2_504 + 8_000;
    // Page 53 at 200 starts past the first 10,000 numbers: refused, naming the cursor.
    await expect(runCli(['suppressions', 'list', '--account', account, '--page', '53'], { out: () => {} })).rejects.toThrow(
      /read further with cursor/,
    );
    await expect(runCli(['suppressions', 'list', '--account', account, '--page', '2', '--all'], { out: () => {} })).rejects.toThrow(
      '--page is not for --cursor or --all',
    );

    const { out, notes } = await run('suppressions', 'list', '--account', account, '--all');
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { phoneNumber: string; createdAt: string });
    expect(lines).toHaveLength(total);
    expect(new Set(lines.map((l) => l.phoneNumber)).size).toBe(total);
    // Newest first, then by number: the list's order, across every page boundary.
    const key = (l: { phoneNumber: string; createdAt: string }) => [-Date.parse(l.createdAt), l.phoneNumber] as const;
    for (let i = 1; i < lines.length; i++) {
      const [a, b] = [key(lines[i - 1]), key(lines[i])];
      expect(a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]), `line ${i}`).toBe(true);
    }
    expect(notes.split('\n').filter((l) => l.startsWith('suppressions:'))).toHaveLength(Math.ceil(total / 200));
    expect(notes).toContain(`${total} numbers`);
  }, 180_000);
});
