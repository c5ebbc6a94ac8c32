// Usage: node scripts/node-runtime/bin-dir.mjs LINE   (what .ci/node-bin runs)
// Prints a directory whose `node` is on that major line and within package.json "engines": this Node's when
// it is, else the pinned one (installed into the cache first if need be, npm's output on stderr). Exits 1,
// saying why, when it cannot: CI must fail rather than quietly test another Node.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseVersion, satisfiesEngines } from './engines.mjs';
import { cacheBase, installPin, isInstalled, pinnedNode, readPins, versionOf } from './pins.mjs';

const fail = (why) => {
  process.stderr.write(`.ci/node-bin: ${why}\n`);
  process.exit(1);
};

const line = Number(process.argv[2]);
if (!Number.isInteger(line)) fail('usage: .ci/node-bin <major line, e.g. 24>');
const root = fileURLToPath(new URL('../..', import.meta.url));
const range = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).engines.node;

if (parseVersion(process.versions.node)[0] === line && satisfiesEngines(process.versions.node, range)) {
  process.stdout.write(path.dirname(process.execPath) + '\n');
  process.exit(0);
}
const pin = readPins().find((p) => p.line === line);
if (!pin) fail(`Node ${line} is not pinned in scripts/node-runtime/pins/`);
if (!satisfiesEngines(pin.version, range)) fail(`the pinned Node ${pin.version} is outside engines ${range}`);
const node = pinnedNode(pin, cacheBase(process.env));
if (!isInstalled(node)) {
  process.stderr.write(`.ci/node-bin: installing the pinned Node ${pin.version} into ${node.dir}\n`);
  try {
    installPin(pin, node, { env: process.env, output: 2 });
  } catch (e) {
    fail(`no Node ${line} binary: ${e.message}`);
  }
}
if (versionOf(path.join(node.bin, 'node')) !== pin.version) fail(`${node.bin}/node does not run as Node ${pin.version}`);
process.stdout.write(node.bin + '\n');
