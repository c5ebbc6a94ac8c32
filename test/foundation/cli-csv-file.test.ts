// The CLI reads a CSV file whole, so its size is checked before it is read.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { csvFileText, MAX_CSV_FILE_BYTES } from '../../src/cli/command.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cbs-cli-csv-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('csvFileText', () => {
  it('reads a file up to the limit', () => {
    const file = path.join(dir, 'ok.csv');
    fs.writeFileSync(file, 'phone_number\n+14155550123\n');
    expect(csvFileText(file, 'csv')).toBe('phone_number\n+14155550123\n');
  });

  it('refuses a larger file by its size', () => {
    const file = path.join(dir, 'big.csv');
    // Sparse: no disk space, and a read would take seconds and 512 MB.
    fs.writeFileSync(file, '');
    fs.truncateSync(file, MAX_CSV_FILE_BYTES + 1);
    expect(() => csvFileText(file, 'csv')).toThrow(
      `--csv: ${file} is ${MAX_CSV_FILE_BYTES + 1} bytes; the largest file read is ${MAX_CSV_FILE_BYTES} bytes`,
    );
  });

  it('names the flag when it is missing', () => {
    expect(() => csvFileText(undefined, 'csv')).toThrow('--csv is required');
  });
});
