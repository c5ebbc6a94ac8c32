// The embedded database's data directory: one process at a time, and initdb out of process.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const INITDB_SCRIPT = fileURLToPath(new URL('./pglite-initdb.mjs', import.meta.url));

/**
 * initdb of a new data directory, in a short-lived child process: in-process it leaves ~500 MB of
 * WebAssembly garbage behind, so the server's peak memory was twice its working size (measured:
 * ~860 MB peak on a fresh directory, ~275 MB opening an existing one).
 */
export async function initPgliteDataDir(dataDir: string): Promise<void> {
  if (fs.existsSync(path.join(dataDir, 'PG_VERSION'))) return;
  await promisify(execFile)(process.execPath, [INITDB_SCRIPT, dataDir]);
}

export class DataDirInUseError extends Error {}

/** The embedded database's directory inside DATA_DIR. */
export const PGLITE_DIR = 'pglite';

/**
 * Makes DATA_DIR private to this user: the directory 0700, the files directly in it (app secret,
 * operator token, lock) 0600, and all of the embedded database (`pglite/`) 0700 / 0600. PGlite
 * writes its initial files 0666 whatever the umask (a process umask doesn't help), so this runs
 * after every open. Other subdirectories are left alone; links are not followed. Returns how many
 * entries were looser than that (bounded by the entries in the directory, ~1,000 for a new database).
 */
export function tightenDataDir(root: string): number {
  let loosened = 0;
  const tighten = (file: string, stat: fs.Stats) => {
    const wanted = stat.isDirectory() ? 0o700 : 0o600;
    if ((stat.mode & 0o777 & ~wanted) === 0) return;
    fs.chmodSync(file, stat.mode & 0o777 & wanted);
    loosened++;
  };
  const walk = (dir: string, recurse: (name: string) => boolean) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isFile() && !entry.isDirectory()) continue;
      const file = path.join(dir, entry.name);
      const stat = fs.lstatSync(file, { throwIfNoEntry: false });
      if (!stat) continue; // removed meanwhile (a lock released)
      if (stat.isFile()) tighten(file, stat);
      else if (stat.isDirectory() && recurse(entry.name)) {
        tighten(file, stat);
        walk(file, () => true);
      }
    }
  };
  tighten(root, fs.statSync(root)); // DATA_DIR itself may be a link the operator made
  walk(root, (name) => name === PGLITE_DIR);
  return loosened;
}

/** Locks this process holds (a second open in the same process is refused too). */
const held = new Set<string>();
const TAKEOVER_STALE_MS = 30_000;

/**
 * Takes the data directory for this process: PGlite does not stop a second process from opening
 * the same directory, and two writers corrupt it (seen here: both opened and both wrote). The lock
 * is a file beside the directory naming its owner by pid and start time, so a process that reuses
 * a dead owner's pid (a restarted container) is not mistaken for it. A dead owner's lock is taken
 * over under an exclusive marker file: of several processes starting at once, exactly one wins.
 * Returns the release function.
 */
export async function lockDataDir(dataDir: string): Promise<() => void> {
  const lockPath = `${dataDir}.lock`;
  const me = processToken(process.pid);
  if (held.has(lockPath) || me === null) throw inUse(dataDir, lockPath, process.pid);
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(lockPath, me, { flag: 'wx', mode: 0o600 });
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const owner = readFile(lockPath);
    if (owner === null) continue; // released meanwhile
    const ownerPid = Number.parseInt(owner, 10);
    if (processToken(ownerPid) === owner) throw inUse(dataDir, lockPath, ownerPid);
    const marker = `${lockPath}.takeover`;
    try {
      fs.writeFileSync(marker, me, { flag: 'wx', mode: 0o600 });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 200) throw e;
      // Another process is taking the lock over; a marker left by one that died is cleared.
      if (Date.now() - (fs.statSync(marker, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) > TAKEOVER_STALE_MS)
        fs.rmSync(marker, { force: true });
      await new Promise((r) => setTimeout(r, 25));
      continue;
    }
    try {
      // Only the stale lock goes: a live one can't have replaced it while the file existed.
      if (readFile(lockPath) === owner) fs.rmSync(lockPath, { force: true });
    } finally {
      fs.rmSync(marker, { force: true });
    }
  }
  held.add(lockPath);
  return () => {
    held.delete(lockPath);
    if (readFile(lockPath) === me) fs.rmSync(lockPath, { force: true });
  };
}

function inUse(dataDir: string, lockPath: string, pid: number): DataDirInUseError {
  return new DataDirInUseError(
    `The embedded database in ${dataDir} is in use by process ${pid}; only one process may open it. ` +
      `Talk to that server instead (the CLI does when CLI_SERVER_URL points at it and ADMIN_TOKEN is set), or stop it first. ` +
      `If no such process runs, delete ${lockPath}.`,
  );
}

function readFile(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/**
 * `<pid> <start time>` of a running process, null when it doesn't run. The start time (clock
 * ticks since boot, /proc/<pid>/stat field 22) tells a reused pid apart; where /proc is missing
 * the pid alone is used.
 */
export function processToken(pid: number): string | null {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  const stat = readFile(`/proc/${pid}/stat`);
  if (stat !== null) return `${pid} ${stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]}`;
  try {
    process.kill(pid, 0);
    return fs.existsSync('/proc/self/stat') ? null : String(pid);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM' ? String(pid) : null;
  }
}
