// Small findings of the hostile-input review, one class each: the embedded database's file modes,
// GraphQL suggestions naming hidden operations, /metrics authentication, the CLI's stale token
// file, the dashboard's source map, numeric settings, and dates before year 1000.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { runCli } from '../../src/cli/index.ts';
import { ConfigError, configSchema, loadConfig, NUMBER_SETTINGS } from '../../src/config.ts';
import { openDatabase } from '../../src/db/client.ts';
import { runStatement } from '../../src/db/sql-statement.ts';
import { newChallenge, operatorProof } from '../../src/services/auth/operator-proof.ts';
import { ADMIN_TOKEN, createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES } from '../helpers/batch-requests.ts';
import { tempDataDir } from '../helpers/data-dir.ts';
import { startServerProcess } from '../helpers/server-process.ts';

const METRICS_TOKEN = 'metrics-token-for-hardening-0123';
let t: TestApp;
let a: SeededAccount;
const dirs: string[] = [];

beforeAll(async () => {
  t = await createTestApp({ config: { METRICS_TOKEN, AUTH_FAILURES_PER_MINUTE: '5' } });
  a = await t.seedAccount();
});
afterAll(async () => {
  await t.close();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** Every entry under `root` (links not followed) with its permission bits. */
function modesUnder(root: string): { file: string; dir: boolean; mode: number }[] {
  const out = [{ file: root, dir: true, mode: fs.statSync(root).mode & 0o777 }];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const file = path.join(d, e.name);
      if (e.isSymbolicLink()) continue;
      out.push({ file, dir: e.isDirectory(), mode: fs.lstatSync(file).mode & 0o777 });
      if (e.isDirectory()) walk(file);
    }
  };
  walk(root);
  return out;
}

const notPrivate = (root: string) => modesUnder(root).filter((e) => e.mode !== (e.dir ? 0o700 : 0o600));

describe('the embedded database is private to its user', () => {
  it('a new data dir: the directory 0700 and every file 0600, nothing reported', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cbs-modes-new-'));
    dirs.push(dataDir);
    fs.chmodSync(dataDir, 0o755);
    const reports: number[] = [];
    // No template: initdb writes the files (PGlite makes them 0666 whatever the umask).
    const db = await openDatabase({ dataDir, onLooseModes: (n) => reports.push(n) });
    try {
      expect(modesUnder(dataDir).length).toBeGreaterThan(500);
      expect(notPrivate(dataDir)).toEqual([]);
      expect(reports).toEqual([]);
    } finally {
      await db.close();
    }
  }, 120_000);

  it('a server started on a loosened data dir tightens it at start and says so once', async () => {
    const dataDir = tempDataDir('cbs-modes-old-');
    dirs.push(dataDir);
    // Without the run's template (the PostgreSQL pass), an earlier start makes the database.
    if (!fs.existsSync(path.join(dataDir, 'pglite', 'PG_VERSION'))) await (await openDatabase({ dataDir })).close();
    fs.writeFileSync(path.join(dataDir, 'app-secret'), 'x'.repeat(40), { mode: 0o644 });
    for (const e of modesUnder(dataDir)) fs.chmodSync(e.file, e.dir ? 0o777 : 0o666);
    const server = await startServerProcess({
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      ADMIN_TOKEN: '',
      RUN_WORKER: 'false',
      SEED_DEMO: 'true',
      LOG_LEVEL: 'warn',
    });
    try {
      // Once the banner names the demo account, its e-mail and prompt are written (and the operator token file).
      await expect.poll(() => server.stdout()).toContain('Demo account created');
      expect(fs.existsSync(path.join(dataDir, 'operator-token'))).toBe(true);
      expect(notPrivate(dataDir)).toEqual([]);
      const warnings = server
        .stdout()
        .split('\n')
        .filter((l) => l.includes('made private'));
      expect(warnings).toHaveLength(1);
      expect(JSON.parse(warnings[0]).entries).toBeGreaterThan(500);
    } finally {
      server.child.kill('SIGTERM');
      await server.waitForExit();
    }
  }, 120_000);
});

describe('GraphQL suggestions name nothing hidden', () => {
  const hidden = /admin[A-Z]\w*|Admin[A-Z]\w*/;

  it('near-misses of hidden fields, arguments, types and input fields get no "Did you mean"', async () => {
    const documents: [string, Record<string, unknown>][] = [
      ['{ adminAccount { id } }', {}],
      ['{ adminAcounts { id } }', {}],
      ['mutation { adminCreateAcount(input: {}) { apiKey } }', {}],
      ['query($x: AdminCreateAccountInpt) { me { id } }', {}],
      ['fragment F on AdminCreateAccountPayloa { apiKey } { me { id } }', {}],
    ];
    // Exact hidden names (known already: FORBIDDEN says so) with misspelled input fields, checked at
    // validation and, for a variable of a hidden input type, when the operation runs.
    const exact: [string, Record<string, unknown>][] = [
      ['mutation { adminCreateAccount(input: { nme: "x", emial: "y" }) { apiKey } }', {}],
      ['query($x: AdminCreateAccountInput) { me { id } }', { x: { nme: 'x', emial: 'y' } }],
    ];
    for (const key of [null, a.apiKey]) {
      for (const [query, variables] of [...documents, ...exact]) {
        const r = await t.gql(query, variables, key);
        expect(r.body.errors?.length, query).toBeGreaterThan(0);
        for (const e of r.body.errors) expect(e.message, query).not.toContain('Did you mean');
      }
      for (const [query, variables] of documents) {
        const r = await t.gql(query, variables, key);
        for (const e of r.body.errors) {
          // Only the names the caller wrote itself may appear.
          const named = (e.message.match(new RegExp(hidden, 'g')) ?? []) as string[];
          for (const name of named) expect(query, `${e.message} names ${name}`).toContain(name);
        }
      }
    }
  });

  it('the errors themselves are unchanged otherwise (still a validation error with its location)', async () => {
    const r = await t.gql('{ me { idd } }', {}, a.apiKey);
    expect(r.body.errors[0].message).toBe('Cannot query field "idd" on type "Account".');
    expect(r.body.errors[0].locations).toEqual([{ line: 1, column: 8 }]);
  });
});

describe('/metrics authentication', () => {
  const scrape = (token: string | null, address: string) =>
    t.app.fetch(new Request('http://test.local/metrics', { headers: token ? { authorization: `Bearer ${token}` } : {} }), { clientAddress: address });
  const me = (key: string, address: string) =>
    t.app.fetch(new Request('http://test.local/api/v1/public/me', { headers: { authorization: `Bearer ${key}` } }), { clientAddress: address });

  it('accepts only METRICS_TOKEN: the admin token is refused', async () => {
    expect((await scrape(METRICS_TOKEN, '198.51.100.1')).status).toBe(200);
    const admin = await scrape(ADMIN_TOKEN, '198.51.100.1');
    expect(admin.status).toBe(401);
    expect(admin.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('wrong tokens spend the same per-address failed-auth budget as API keys, and a spent address is refused everywhere', async () => {
    const address = '198.51.100.2';
    // AUTH_FAILURES_PER_MINUTE is 5 here: 3 wrong scrapes and 2 wrong keys spend it.
    for (const token of ['wrong-token-0123456789', null, ADMIN_TOKEN]) expect((await scrape(token, address)).status).toBe(401);
    for (let i = 0; i < 2; i++) expect((await me('sk_wrong', address)).status).toBe(401);
    const blocked = await scrape(METRICS_TOKEN, address);
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await me('sk_wrong', address)).status).toBe(429);
    // A valid API key is checked first and proceeds on its account's budget.
    expect((await me(a.apiKey, address)).status).toBe(200);
    // Another address is not affected.
    expect((await scrape(METRICS_TOKEN, '198.51.100.3')).status).toBe(200);
  });

  it('is absent without METRICS_TOKEN, even with an admin token configured', async () => {
    const off = buildApp({ ...t.deps, config: { ...t.deps.config, METRICS_TOKEN: undefined } });
    try {
      const res = await off.fetch(new Request('http://test.local/metrics', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }));
      expect(res.status).toBe(404);
    } finally {
      await off.stop();
    }
  });
});

describe("the CLI sends the token file's token only to the server that wrote it", () => {
  const TOKEN = 'stale-operator-token-0123456789abcdef';
  let fake: http.Server;
  let fakeUrl = '';
  const seen: http.IncomingHttpHeaders[] = [];
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    // Whatever now listens on the stale file's port: healthy, and answers anything with 200.
    fake = http.createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(req.url?.startsWith('/healthz') ? '{"status":"ok"}' : '{"proof":"not-a-proof","data":{"adminAccounts":[]}}');
    });
    await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
    fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
    for (const k of ['CLI_SERVER_URL', 'DATA_DIR', 'ADMIN_TOKEN', 'DATABASE_URL']) saved[k] = process.env[k];
  });
  afterAll(async () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await new Promise((r) => fake.close(r));
  });

  async function runAgainstFake(fileContent: string): Promise<Error> {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cbs-stale-'));
    dirs.push(dataDir);
    fs.writeFileSync(path.join(dataDir, 'operator-token'), fileContent, { mode: 0o600 });
    Object.assign(process.env, { CLI_SERVER_URL: fakeUrl, DATA_DIR: dataDir, ADMIN_TOKEN: '' });
    delete process.env.DATABASE_URL;
    const failure = await runCli(['accounts', 'list', '--json'], () => {}).then(
      () => null,
      (e: Error) => e,
    );
    expect(failure).toBeInstanceOf(Error);
    return failure!;
  }

  const tokenSent = () => seen.some((h) => Object.values(h).some((v) => String(v).includes(TOKEN)));

  it('a file naming this URL, but the server there cannot prove it holds the token: stale, named, not sent', async () => {
    const e = await runAgainstFake(JSON.stringify({ token: TOKEN, url: fakeUrl }));
    expect(e.message).toContain('is stale');
    expect(e.message).toContain(fakeUrl);
    expect(e.message).toContain('did not send');
    expect(seen.some((h) => h.host && h['user-agent'] !== undefined)).toBe(true); // the fake was asked
    expect(tokenSent()).toBe(false);
  });

  it('a file written by a server at another address: refused before asking anything', async () => {
    const before = seen.length;
    const e = await runAgainstFake(JSON.stringify({ token: TOKEN, url: 'http://127.0.0.1:1' }));
    expect(e.message).toContain('belongs to the server at http://127.0.0.1:1');
    expect(e.message).toContain(fakeUrl);
    expect(seen.slice(before).every((h) => !h.authorization)).toBe(true);
    expect(tokenSent()).toBe(false);
  });

  it('an older file (the token alone) is held to the same proof', async () => {
    const e = await runAgainstFake(TOKEN + '\n');
    expect(e.message).toContain('is stale');
    expect(tokenSent()).toBe(false);
  });

  it('the proof endpoint: only in a process that wrote a token file, bounded challenge, a MAC of the token', async () => {
    const token = 'the-operator-token-0123456789abcdef';
    const withFile = buildApp(t.deps, { operatorToken: token });
    try {
      const challenge = newChallenge();
      const ok = await withFile.fetch(new Request(`http://test.local/operator/proof?challenge=${challenge}`));
      expect(ok.status).toBe(200);
      const { proof } = (await ok.json()) as { proof: string };
      expect(proof).toBe(operatorProof(token, challenge));
      expect(proof).not.toContain(token);
      for (const bad of ['short', 'x'.repeat(129), 'has spaces in it 0123456789']) {
        expect((await withFile.fetch(new Request(`http://test.local/operator/proof?challenge=${encodeURIComponent(bad)}`))).status).toBe(400);
      }
    } finally {
      await withFile.stop();
    }
    // The test app has an ADMIN_TOKEN from its config but wrote no file: no proofs.
    expect((await t.app.fetch(new Request(`http://test.local/operator/proof?challenge=${newChallenge()}`))).status).toBe(404);
  });
});

describe('the dashboard source map', () => {
  const get = (app: { fetch(r: Request): Promise<Response> }, p: string) => app.fetch(new Request(`http://test.local${p}`));
  const scriptOf = async (app: { fetch(r: Request): Promise<Response> }) => {
    const html = await (await get(app, '/dashboard')).text();
    return /src="(\/dashboard\/assets\/app-[^"]+\.js)"/.exec(html)![1];
  };

  it('is not served by default, and the script does not link one', async () => {
    const script = await scriptOf(t.app);
    const js = await (await get(t.app, script)).text();
    expect(js).not.toContain('sourceMappingURL');
    expect((await get(t.app, `${script}.map`)).status).toBe(404);
  }, 60_000);

  it('with DASHBOARD_SOURCE_MAP, names its sources relative to the project: no absolute build path', async () => {
    const withMap = buildApp({ ...t.deps, config: { ...t.deps.config, DASHBOARD_SOURCE_MAP: true } });
    try {
      const script = await scriptOf(withMap);
      const js = await (await get(withMap, script)).text();
      expect(js).toMatch(/sourceMappingURL=app-[A-Z0-9]+\.js\.map/);
      const res = await get(withMap, `${script}.map`);
      expect(res.status).toBe(200);
      const text = await res.text();
      const map = JSON.parse(text) as { sources: string[] };
      expect(map.sources).toContain('src/web/main.ts');
      const projectDir = path.resolve(import.meta.dirname, '../..');
      expect(text).not.toContain(projectDir);
      // Relative (a node_modules outside the project shows as ../…), never absolute.
      for (const s of map.sources) expect(path.isAbsolute(s) || s.startsWith('file:'), s).toBe(false);
    } finally {
      await withMap.stop();
    }
  }, 60_000);
});

describe('numeric settings are read strictly', () => {
  it('an empty value, hex, exponent, sign, spaces or separators are errors naming the setting', () => {
    for (const value of ['', '0x10', '1e3', '+5', '-1', ' 10', '10 ', '1_000', '1,000', '10.5', 'Infinity', '٣']) {
      expect(() => loadConfig({ BATCH_RETENTION_DAYS: value }), JSON.stringify(value)).toThrow(ConfigError);
      expect(() => loadConfig({ BATCH_RETENTION_DAYS: value }), JSON.stringify(value)).toThrow(/BATCH_RETENTION_DAYS: /);
    }
    expect(() => loadConfig({ BATCH_RETENTION_DAYS: '' })).toThrow('BATCH_RETENTION_DAYS: is set but empty');
    expect(() => loadConfig({ BATCH_RETENTION_DAYS: '0x10' })).toThrow('BATCH_RETENTION_DAYS: must be a whole number in decimal digits');
    expect(loadConfig({ BATCH_RETENTION_DAYS: '16' }).BATCH_RETENTION_DAYS).toBe(16);
    expect(loadConfig({ BATCH_RETENTION_DAYS: '016' }).BATCH_RETENTION_DAYS).toBe(16);
    expect(loadConfig({}).BATCH_RETENTION_DAYS).toBe(0);
    // Fractions where the setting takes one, in decimal digits too.
    expect(loadConfig({ RETELL_DIAL_RATE_PER_NUMBER: '0.5' }).RETELL_DIAL_RATE_PER_NUMBER).toBe(0.5);
    expect(() => loadConfig({ RETELL_DIAL_RATE_PER_NUMBER: '.5' })).toThrow(/RETELL_DIAL_RATE_PER_NUMBER: must be a number in decimal digits/);
    // An empty string setting still means unset.
    expect(loadConfig({ ADMIN_TOKEN: '' }).ADMIN_TOKEN).toBeUndefined();
  });

  it('every numeric setting goes through the one helper: empty and 0x10 refused for each', () => {
    const numeric = Object.entries(configSchema.shape).filter(([, schema]) =>
      ['7', '1024', '5000'].some((v) => {
        const r = schema.safeParse(v);
        return r.success && typeof r.data === 'number';
      }),
    );
    expect(numeric.length).toBeGreaterThan(40);
    for (const [name] of numeric) {
      expect(NUMBER_SETTINGS.has(name), name).toBe(true);
      for (const value of ['', '0x10']) expect(() => loadConfig({ [name]: value }), `${name}=${value}`).toThrow(new RegExp(`${name}: `));
    }
  });
});

describe('dates before year 1000', () => {
  it('a schedule_date before 1000 is a 422 request-validation error, on both surfaces; 1000 is stored exactly', async () => {
    for (const date of ['0050-01-01', '0001-01-01', '0999-12-31']) {
      const r = await t.request('POST', CALL_BATCHES, { key: a.apiKey, body: batchBody(a, { schedule_date: date }) });
      expect(r.status, date).toBe(422);
      expect(r.body.error.details).toEqual(['schedule_date: Value error, Invalid date, expected a year from 1000 to 9999']);
    }
    const g = await t.gql(
      `mutation($input: CreateCallBatchInput!) { createCallBatch(input: $input) { __typename } }`,
      {
        input: {
          agentId: a.agent.id,
          versionId: a.version.id,
          interruption: true,
          useAlternateNumber: false,
          startMode: 'scheduled',
          scheduleDate: '0050-01-01',
          scheduleTime: '09:30',
          scheduleTimezone: 'UTC',
          contacts: [{ contactId: 'c1', phoneNumber: '+14155550123' }],
        },
      },
      a.apiKey,
    );
    expect(JSON.stringify(g.body.errors ?? g.body.data)).toContain('Invalid date, expected a year from 1000 to 9999');

    const ok = await t.request('POST', CALL_BATCHES, {
      key: a.apiKey,
      body: batchBody(a, { schedule_date: '1000-01-01', schedule_timezone: 'UTC' }),
    });
    expect(ok.status).toBe(201);
    const read = await t.request('GET', `${CALL_BATCHES}/${ok.body.data.batch_id}`, { key: a.apiKey });
    expect(read.body.data.scheduled_at).toBe('1000-01-01T09:30:00.000Z');
  });

  it('list filters before year 1000 select exactly (no batch, or every batch)', async () => {
    const all = (await t.request('GET', `${CALL_BATCHES}?limit=200`, { key: a.apiKey })).body.data.pagination.total;
    expect(all).toBeGreaterThan(0);
    const list = async (q: string) => (await t.request('GET', `${CALL_BATCHES}?limit=200&${q}`, { key: a.apiKey })).body.data.pagination.total;
    expect(await list('created_at_to=0099-12-31T23:59:59Z')).toBe(0);
    expect(await list('created_at_to=0050-06-01T00:00:00Z')).toBe(0);
    expect(await list('created_at_from=0050-06-01T00:00:00Z')).toBe(all);
    const records = await t.request('GET', '/api/v1/public/call-records?start_date=0050-01-01&end_date=0099-12-31', { key: a.apiKey });
    expect(records.status).toBe(200);
    expect(records.body.data.items).toEqual([]);
    const g = await t.gql(
      'query($to: DateTime) { batches(filter: { createdAtTo: $to }) { pagination { total } } }',
      { to: '0099-12-31T00:00:00Z' },
      a.apiKey,
    );
    expect(g.body.errors ?? g.body.data.batches.pagination.total).toBe(0);
  });

  it('the raw driver reads a year-50 timestamp as year 50', async () => {
    const [row] = await runStatement<{ at: Date }>(t.deps.db, `SELECT '0050-03-01T12:00:00Z'::timestamptz AS at`);
    expect(row.at.toISOString()).toBe('0050-03-01T12:00:00.000Z');
  });
});
