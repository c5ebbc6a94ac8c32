// Child process for the data dir lock test: opens DATA_DIR, reports, holds it for a while.
import { openDatabase } from '../../src/db/client.ts';
import { DataDirInUseError } from '../../src/db/pglite-data-dir.ts';

const [dataDir, holdMs] = [process.argv[2], Number(process.argv[3] ?? 0)];
try {
  const db = await openDatabase({ dataDir });
  process.stdout.write('opened\n');
  await new Promise((r) => setTimeout(r, holdMs));
  await db.close();
} catch (e) {
  process.stdout.write(e instanceof DataDirInUseError ? 'in-use\n' : `error: ${String(e)}\n`);
}
