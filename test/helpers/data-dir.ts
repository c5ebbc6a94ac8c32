// DATA_DIRs for tests of the embedded database on disk (CLI, server processes, the lock).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';

/**
 * A new, empty-of-data DATA_DIR: its embedded database is a copy of the run's initialised and
 * migrated template (test/helpers/global-setup.ts), so opening it skips initdb (seconds of
 * WebAssembly in a child process). Without a template (another config) the directory is empty
 * and the first open initialises it. The first start on a really new directory is tested in
 * test/foundation/process.test.ts, which does not use this.
 */
export function tempDataDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const template = inject('dataDirTemplate');
  if (template) fs.cpSync(path.join(template, 'pglite'), path.join(dir, 'pglite'), { recursive: true });
  return dir;
}
