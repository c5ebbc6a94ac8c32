#!/usr/bin/env node
// Usage: node scripts/with-supported-node.mjs COMMAND [ARGS...]    (`npm start`, `npm test` and the other scripts)
// Runs COMMAND under this Node when package.json "engines" accepts it, fetching nothing. Else under the newest
// Node pinned in scripts/node-runtime/pins/ (from the npm registry, installed once into a cache outside the
// repo), first on PATH, saying so in one line on stderr; when none can be had, under this Node, saying so.
// COMMAND `node` means the Node chosen. Plain JS that old Node runs too.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { satisfiesEngines } from './node-runtime/engines.mjs';
import { runAsThisProcess } from './node-runtime/forward.mjs';

const [command, ...args] = process.argv.slice(2);
if (!command) {
  process.stderr.write('usage: node scripts/with-supported-node.mjs COMMAND [ARGS...]\n');
  process.exit(2);
}

const root = fileURLToPath(new URL('..', import.meta.url));
const engines = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).engines;
const range = engines && engines.node;
const current = process.versions.node;

/** The bin directory of the supported Node to use instead of this one, or null to stay on this one. */
async function supportedNodeBin() {
  // Loaded only here: a supported Node starts the command without them.
  const { choosePin, installFailedNotice, noPinNotice, pinnedNotice } = await import('./node-runtime/choose.mjs');
  const { cacheBase, installPin, isInstalled, pinnedNode, readPins } = await import('./node-runtime/pins.mjs');
  const say = (line) => process.stderr.write(line + '\n');
  const { platform, arch } = process;
  const pin = choosePin({ range, pins: readPins(), platform, arch });
  if (!pin) {
    say(noPinNotice({ current, range, platform, arch }));
    return null;
  }
  const node = pinnedNode(pin, cacheBase(process.env));
  const installed = isInstalled(node);
  const home = os.homedir();
  const where = node.dir.startsWith(home + path.sep) ? '~' + node.dir.slice(home.length) : node.dir;
  say(pinnedNotice({ current, range, pin, where, installing: !installed }));
  if (installed) return node.bin;
  try {
    installPin(pin, node, { env: process.env });
    return node.bin;
  } catch (error) {
    say(installFailedNotice({ current, pin, error }));
    return null;
  }
}

const bin = !range || satisfiesEngines(current, range) ? null : await supportedNodeBin();
const env = { ...process.env };
if (bin) {
  env.PATH = bin + path.delimiter + (env.PATH || '');
  // npm's own record of the node running the script; tools that spawn "the node" read it.
  for (const key of ['NODE', 'npm_node_execpath']) if (env[key]) env[key] = path.join(bin, 'node');
}
runAsThisProcess(command === 'node' ? (bin ? path.join(bin, 'node') : process.execPath) : command, args, env);
