// Child process for the data dir lock test: opens DATA_DIR, reports, and holds it until its stdin
// ends (the test says when: every rival has tried by then, however slowly they started).
import { openDatabase } from '../../src/db/client.ts';
import { DataDirInUseError } from '../../src/db/pglite-data-dir.ts';

const dataDir = process.argv[2];
try {
  const db = await openDatabase({ dataDir });
  process.stdout.write('opened\n');
  await new Promise<void>((r) => {
    process.stdin.once('end', r).once('close', r).resume();
  });
  await db.close();
} catch (e) {
  process.stdout.write(e instanceof DataDirInUseError ? 'in-use\n' : `error: ${String(e)}\n`);
}
