// Creates a PGlite data directory and exits: `node src/db/pglite-initdb.mjs <dir>`.
// Plain JavaScript so that plain node runs it without tsx (see initPgliteDataDir).
import { PGlite } from '@electric-sql/pglite';

const db = await PGlite.create({ dataDir: process.argv[2] });
await db.close();
