// Vitest global setup: migrates one template database per run, which every suite's throwaway
// database is cloned from (test/helpers/database.ts, test/helpers/data-dir.ts). A fresh PGlite
// runs initdb (2-4 s of WebAssembly) and every suite used to migrate its own; a clone is a copy.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/db/client.ts';
import { migrate } from '../../src/db/migrate.ts';
import { createPgDatabase, TEST_DATABASE_URL } from './database.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A `dumpDataDir()` tarball of a migrated PGlite (the PGlite pass). */
    pgliteTemplate?: string;
    /** A migrated database on TEST_DATABASE_URL's server, nobody connected (the PostgreSQL pass). */
    pgTemplate?: string;
    /** A DATA_DIR whose embedded database is initialised and migrated, never opened by a test. */
    dataDirTemplate?: string;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  // Vitest runs this for the root and for each project (test/vitest.config.ts); the projects see
  // what the root provides, so it is done once.
  if (!project.isRootProject()) return undefined;
  if (TEST_DATABASE_URL) {
    const template = await createPgDatabase(TEST_DATABASE_URL);
    const db = await openDatabase({ databaseUrl: template.url, poolSize: 1 });
    try {
      await migrate(db);
    } finally {
      await db.close();
    }
    project.provide('pgTemplate', template.name);
    return () => template.drop();
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cbs-test-template-'));
  const dataDir = path.join(dir, 'data');
  // The directory's initdb runs in a child process (initPgliteDataDir) meanwhile.
  const [tarball] = await Promise.all([migratedTarball(path.join(dir, 'pglite.tar')), migrateDataDir(dataDir)]);
  project.provide('pgliteTemplate', tarball);
  project.provide('dataDirTemplate', dataDir);
  return async () => fs.rmSync(dir, { recursive: true, force: true });
}

async function migratedTarball(file: string): Promise<string> {
  const db = await openDatabase({ inMemory: true });
  try {
    await migrate(db);
    fs.writeFileSync(file, Buffer.from(await (await db.pglite!.dumpDataDir('none')).arrayBuffer()));
  } finally {
    await db.close();
  }
  return file;
}

async function migrateDataDir(dataDir: string): Promise<void> {
  const db = await openDatabase({ dataDir });
  try {
    await migrate(db);
  } finally {
    await db.close();
  }
}
