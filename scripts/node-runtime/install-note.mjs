// Run by `postinstall`: on an unsupported Node, one line saying what npm's EBADENGINE warnings mean and what
// `npm start` and `npm test` will do about it. Silent on a supported Node; never fails the install.
import fs from 'node:fs';
import { satisfiesEngines } from './engines.mjs';
import { choosePin, installNotice } from './choose.mjs';
import { readPins } from './pins.mjs';

try {
  const range = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).engines.node;
  const current = process.versions.node;
  if (!satisfiesEngines(current, range)) {
    const pin = choosePin({ range, pins: readPins(), platform: process.platform, arch: process.arch });
    process.stderr.write(installNotice({ current, range, pin }) + '\n');
  }
} catch (e) {
  process.stderr.write(`could not check the Node version: ${e && e.message}\n`);
}
