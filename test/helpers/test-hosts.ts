// Test hosts on one machine: a network namespace per host, each with its own veth into a bridge in
// the root namespace, addresses in a private /24 of 10.231.0.0/16, names unique per run. Processes
// started on a host see only its address (and its own loopback); what the root namespace serves on
// the bridge address (a database forwarder, a proxy, a webhook receiver) is reachable from every host.
// Needs root and `ip netns`; `netnsUnavailable()` says why not with a real probe.
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');
/** Preloaded into every process started on a host: it stops when its parent (the test) is gone. */
const EXIT_WITH_PARENT = path.join(root, 'test/helpers/exit-with-parent.ts');
const PREFIX = 'cbh';

function ip(args: string[]): { ok: boolean; out: string } {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}`.trim() };
}

function must(args: string[]): string {
  const r = ip(args);
  if (!r.ok) throw new Error(`ip ${args.join(' ')}: ${r.out}`);
  return r.out;
}

/** Why test hosts cannot be built here (null: they can): not root, no `ip`, or `ip netns add` refused. */
export function netnsUnavailable(): string | null {
  if (process.platform !== 'linux') return 'network namespaces need Linux';
  if (process.getuid?.() !== 0) return 'network namespaces need root (ip netns add)';
  const probe = `${PREFIX}-probe-${process.pid}-${crypto.randomBytes(3).toString('hex')}`;
  const added = ip(['netns', 'add', probe]);
  if (!added.ok) return `ip netns add failed: ${added.out || 'ip not found'}`;
  const veth = `${PREFIX}p${crypto.randomBytes(3).toString('hex')}`;
  const linked = ip(['link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', probe]);
  ip(['link', 'del', veth]);
  ip(['netns', 'del', probe]);
  return linked.ok ? null : `veth pairs unavailable: ${linked.out}`;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Removes what earlier runs left behind when they were killed before their cleanup: namespaces
 * named by a test process that no longer runs and holding no process, then bridges and veths of a
 * run with no namespace left (a run names its namespaces before it makes its links).
 */
function sweepStale(): void {
  const namespaces = ip(['netns', 'list'])
    .out.split('\n')
    .map((l) => l.split(' ')[0]!)
    .filter(Boolean);
  const nsPattern = new RegExp(`^${PREFIX}-(\\d+)-([0-9a-f]{6})-`);
  for (const ns of namespaces) {
    const m = nsPattern.exec(ns);
    if (m && !alive(Number(m[1])) && ip(['netns', 'pids', ns]).out === '') ip(['netns', 'del', ns]);
  }
  const liveTags = new Set(
    ip(['netns', 'list'])
      .out.split('\n')
      .map((l) => nsPattern.exec(l)?.[2])
      .filter(Boolean),
  );
  for (const link of linkNames()) {
    const tag = new RegExp(`^${PREFIX}([0-9a-f]{6})(v\\d+)?$`).exec(link)?.[1];
    if (tag && !liveTags.has(tag)) ip(['link', 'del', link]);
  }
}

/** Names of the root namespace's links (`eth0@if2` → `eth0`). */
const linkNames = () =>
  ip(['-o', 'link'])
    .out.split('\n')
    .map((l) => l.split(': ')[1]?.split('@')[0] ?? '');

/** A /24 of 10.231.0.0/16 that no interface or route of this machine uses yet. */
function freeSubnet(): string {
  const used = `${ip(['-4', 'addr']).out}\n${ip(['-4', 'route']).out}`;
  for (let i = 0; i < 64; i++) {
    const third = crypto.randomInt(0, 256);
    if (!used.includes(`10.231.${third}.`)) return `10.231.${third}`;
  }
  throw new Error('no free 10.231.x.0/24 subnet for test hosts');
}

export interface TestHost {
  name: string;
  /** The network namespace. */
  ns: string;
  address: string;
  /**
   * Starts `node --import tsx <entry>` in this host's namespace (stdio piped: stdin stays open so
   * the process can tell when the test is gone).
   */
  node(entry: string, env: Record<string, string>, opts?: SpawnOptions): ChildProcess;
}

export interface TestNetwork {
  /** The root namespace's address on the bridge: what the hosts reach the test's own servers at. */
  gateway: string;
  hosts: Record<string, TestHost>;
  /** Another process of the test's (started in the root namespace) for teardown() to kill. */
  track(child: ChildProcess): ChildProcess;
  /**
   * Kills every process started on a host (SIGKILL), deletes the namespaces, their veths and the
   * bridge. Idempotent and synchronous (it runs at process exit too).
   */
  teardown(): void;
  /** teardown() once the killed processes have exited, so their sockets close while the links are up. */
  stop(): Promise<void>;
}

/** Builds one namespace per name, all on one bridge; torn down at process exit whatever happens. */
export function createTestNetwork(hostNames: string[]): TestNetwork {
  sweepStale();
  const tag = crypto.randomBytes(3).toString('hex');
  const bridge = `${PREFIX}${tag}`;
  const subnet = freeSubnet();
  const gateway = `${subnet}.1`;
  const namespaces: string[] = [];
  const veths: string[] = [];
  const children = new Set<ChildProcess>();
  let down = false;

  const teardown = () => {
    if (down) return;
    down = true;
    for (const c of children) if (running(c)) c.kill('SIGKILL');
    for (const ns of namespaces) ip(['netns', 'del', ns]);
    // A namespace outlives its name while sockets of its dead processes still close; deleting the
    // root ends of the veths takes their peers with them, so nothing of it stays in sight.
    veths.forEach((veth) => ip(['link', 'del', veth]));
    ip(['link', 'del', bridge]);
    process.removeListener('exit', teardown);
    for (const signal of SIGNALS) process.removeListener(signal, onSignal);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    teardown();
    // Ours was the only handler: die of the signal as the process would have.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  process.once('exit', teardown);
  for (const signal of SIGNALS) process.once(signal, onSignal);

  const hosts: Record<string, TestHost> = {};
  try {
    // Namespaces first: their names tell another run's sweepStale() that the links are in use.
    const nsOf = (name: string) => `${PREFIX}-${process.pid}-${tag}-${name}`;
    for (const name of hostNames) {
      must(['netns', 'add', nsOf(name)]);
      namespaces.push(nsOf(name));
    }
    must(['link', 'add', bridge, 'type', 'bridge']);
    must(['addr', 'add', `${gateway}/24`, 'dev', bridge]);
    must(['link', 'set', bridge, 'up']);
    hostNames.forEach((name, i) => {
      const ns = nsOf(name);
      const address = `${subnet}.${11 + i}`;
      const veth = `${bridge}v${i}`;
      must(['link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
      veths.push(veth);
      must(['link', 'set', veth, 'master', bridge, 'up']);
      must(['-n', ns, 'addr', 'add', `${address}/24`, 'dev', 'eth0']);
      must(['-n', ns, 'link', 'set', 'eth0', 'up']);
      must(['-n', ns, 'link', 'set', 'lo', 'up']);
      hosts[name] = {
        name,
        ns,
        address,
        node(entry, env, opts = {}) {
          const child = spawn(
            'ip',
            ['netns', 'exec', ns, process.execPath, '--import', 'tsx', '--import', EXIT_WITH_PARENT, path.join(root, entry)],
            { cwd: root, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'], ...opts },
          );
          children.add(child);
          return child;
        },
      };
    });
  } catch (e) {
    teardown();
    throw e;
  }
  return {
    gateway,
    hosts,
    track: (child) => {
      children.add(child);
      return child;
    },
    teardown,
    async stop() {
      const exits = [...children].filter(running).map((c) => new Promise((resolve) => c.once('exit', resolve)));
      for (const c of children) if (running(c)) c.kill('SIGKILL');
      // SIGKILL can't be refused: this waits only for the kernel to reap them.
      await Promise.all(exits);
      teardown();
    },
  };
}

const running = (c: ChildProcess) => c.exitCode === null && c.signalCode === null;

const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
