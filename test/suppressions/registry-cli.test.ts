// The CLI's registry commands end to end over the operator route (in-process app on a data dir):
// a file larger than one part is sent in parts cut at line ends, bad lines are named by their file
// line, a full import replaces its area codes, and reassigned results are read.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/index.ts';
import { MAX_REGISTRY_PART_BYTES } from '../../src/domain/registry.ts';
import { openDatabase } from '../../src/db/client.ts';
import { runStatement } from '../../src/db/sql-statement.ts';
import { tempDataDir } from '../helpers/data-dir.ts';

const dir = tempDataDir('cbs-registry-cli-');
const saved = { ...process.env };

beforeAll(() => {
  // No server answers there: the CLI runs the app in-process on the data dir, through the same route.
  Object.assign(process.env, { CLI_SERVER_URL: 'http://127.0.0.1:9', DATA_DIR: dir, ADMIN_TOKEN: '', LOG_LEVEL: 'silent' });
  delete process.env.DATABASE_URL;
});
afterAll(() => {
  process.env = saved;
  fs.rmSync(dir, { recursive: true, force: true });
});

async function cli(args: string[]) {
  const notes: string[] = [];
  let out = '';
  const code = await runCli([...args, '--json'], { out: (s) => (out += s), note: (s) => notes.push(s) });
  return { code, result: out ? JSON.parse(out) : null, notes: notes.join('') };
}

async function listed(numbers: string[]): Promise<boolean[]> {
  const db = await openDatabase({ dataDir: dir });
  try {
    const rows = await runStatement<{ l: boolean }>(db, 'SELECT registry_listed(n) AS l FROM unnest($1::text[]) WITH ORDINALITY u(n, i) ORDER BY i', [
      numbers,
    ]);
    return rows.map((r) => r.l);
  } finally {
    await db.close();
  }
}

describe('registry CLI', () => {
  it('imports a file of several parts, names bad lines by file line, and replaces an area code with --mode full', async () => {
    // More than one part: ~1.6 M lines of 11 bytes is ~18 MB, past the 8 MiB at which the CLI cuts.
    const lines: string[] = [];
    const count = Math.ceil((MAX_REGISTRY_PART_BYTES * 1.1) / 11);
    for (let i = 0; i < count; i++) lines.push(String(2012000000 + i));
    lines.splice(5, 0, '201-555-01x3');
    lines.push('3055550100');
    const big = path.join(dir, 'registry-201.txt');
    fs.writeFileSync(big, lines.join('\n') + '\n');
    const r = await cli(['registry', 'import', '--file', big]);
    expect(r.code).toBe(0);
    expect(r.result).toMatchObject({ files: 1, lines: lines.length, numbers: lines.length - 1, badLines: 1 });
    expect(r.notes).toContain('registry-201.txt line 6: not a number: "201-555-01x3"');
    expect(await listed(['+12012000000', `+1${lines.at(-2)}`, '+13055550100'])).toEqual([true, true, true]);

    const full = path.join(dir, 'registry-305.txt');
    fs.writeFileSync(full, '3055550101\n');
    const f = await cli(['registry', 'import', '--file', full, '--mode', 'full']);
    expect(f.result).toMatchObject({ numbers: 1, areaCodes: 1, removedBlocks: 0 });
    expect(await listed(['+13055550100', '+13055550101', '+12012000000'])).toEqual([false, true, true]);
  }, 180_000);

  it('imports reassigned-number results', async () => {
    const file = path.join(dir, 'reassigned.csv');
    fs.writeFileSync(file, 'phone_number,reassigned_on\n2125550100,2026-02-01\n2125550101,2026-13-01\n');
    const r = await cli(['registry', 'reassigned', '--file', file]);
    expect(r.result).toEqual({ files: 1, lines: 3, numbers: 1, badLines: 1 });
    expect(r.notes).toContain('line 3');
  });
});
