// Query-layer benchmark (not a test): `npm run bench:query-layers`.
//
// Should the service's SQL move to a typed query layer? Measures, per statement, today's
// hand-written SQL on the raw driver (src/db/sql-statement.ts) against Kysely (a typed query
// builder, on PostgreSQL through its own PostgresDialect over the same pg pool, on PGlite through
// kysely-pglite-dialect) and Prisma's model API, for two representative statements:
//   read   the batch-details read by id (get-batch.ts's READ_SQL: 26 columns, `WHERE id = $1 AND
//          account_id = $2`, a fixed statement prepared once per pooled connection), against
//          Kysely's selectFrom(...).select([...]).where(...), Prisma's findUnique with the same
//          select, and the same text unprepared (which separates the builder's cost from the
//          preparation's);
//   insert the batch INSERT of create-batch.ts (INSERT_BATCH_SQL, 31 parameters, ON CONFLICT DO
//          NOTHING RETURNING id; today a plain string on the transaction's connection), against
//          Kysely's insertInto(...).values(...).onConflict(...).returning(...) and Prisma's create
//          (which cannot say ON CONFLICT DO NOTHING: for its cost only).
// Figures per variant: the client's CPU (process.cpuUsage) and wall time per statement over
// BENCH_STATEMENTS sequential statements, and for Kysely the compile alone (building the SQL text
// and parameters, nothing run). Variants alternate within each of BENCH_ROUNDS rounds, the order
// rotated each round; the table shows each variant's median over the rounds and its ratio to
// today's path, with the load average beside each round. PostgreSQL's own CPU is not measured
// (its backends are not visible from here when the server runs elsewhere): wall time includes it.
//
// TypedSQL (`prisma generate --sql`) is not measured: in Prisma 6.19 it introspects the .sql files
// through the native schema-engine binary, which this repo never installs (prisma.config.ts runs
// the bundled JS/WASM engine) and which would have to be downloaded (docs/development.md).
//
// The candidates are not dependencies of the service: install them outside the repo,
//   mkdir -p /tmp/qb && cd /tmp/qb && npm init -y && \
//     npm install --ignore-scripts --legacy-peer-deps kysely kysely-pglite-dialect
// (kysely-pglite-dialect declares PGlite <= 0.4 as a peer; the service's 0.5 instance is handed to
// it). BENCH_QB_MODULES names another node_modules holding them.
//
// Environment:
//   BENCH_PG_URL        a server where databases may be created (postgresql://postgres@127.0.0.1:5432/postgres)
//   BENCH_QB_MODULES    node_modules holding kysely and kysely-pglite-dialect (/tmp/qb/node_modules)
//   BENCH_STATEMENTS    statements per variant and round (3000)
//   BENCH_ROUNDS        alternating rounds (5)
//   BENCH_TARGETS       of postgres,pglite (both)
//   BENCH_ANALYZE       0: no ANALYZE of batches before each round (the fixed read's generic plan then
//                       stays the one chosen on the small seeded table: see fixedPlan)
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type Database } from '../src/db/client.ts';
import { migrate } from '../src/db/migrate.ts';
import { fixedStatement, runStatement } from '../src/db/sql-statement.ts';
import { snakeCase } from '../src/domain/text-forms.ts';
import type { Account, Prisma } from '../src/generated/prisma/client.ts';
import { createAccount } from '../src/services/accounts/accounts.ts';
import { addDidNumber, createAgent, createPromptVersion } from '../src/services/accounts/catalog.ts';
import { BATCH_ROW_COLUMNS, withDetailColumns } from '../src/services/batches/get-batch.ts';
import { throwawayDatabase } from './throwaway-database.ts';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const BASE_URL = process.env.BENCH_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const MODULES = process.env.BENCH_QB_MODULES ?? '/tmp/qb/node_modules';
const STATEMENTS = env('BENCH_STATEMENTS', 3000);
const ROUNDS = env('BENCH_ROUNDS', 5);
const WARMUP = 300;
const ANALYZE = process.env.BENCH_ANALYZE !== '0';
const TARGETS = new Set((process.env.BENCH_TARGETS ?? 'postgres,pglite').split(',').map((t) => t.trim()));

// ---- The candidates, loaded from outside the repo and typed here by the little the bench calls. ----
// (In the service the builder would be typed by a generated `DB` interface; here tsc cannot see
// Kysely's own types, so the calls below are checked against these shapes only.)

interface Compiled {
  sql: string;
  parameters: readonly unknown[];
}
interface KQuery {
  compile(): Compiled;
  executeTakeFirst(): Promise<Record<string, unknown> | undefined>;
}
interface KSelect extends KQuery {
  where(column: string, op: '=', value: unknown): KSelect;
}
interface KInsert extends KQuery {
  onConflict(build: (oc: { columns(c: string[]): { doNothing(): unknown } }) => unknown): KInsert;
  returning(column: string): KInsert;
}
interface KyselyLike {
  selectFrom(table: string): { select(columns: readonly string[]): KSelect };
  insertInto(table: string): { values(row: Record<string, unknown>): KInsert };
}
interface Candidates {
  kyselyOnPostgres(pool: NonNullable<Database['pool']>): KyselyLike;
  kyselyOnPglite(pglite: NonNullable<Database['pglite']>): KyselyLike;
  versions: string;
}

function loadCandidates(): Candidates | null {
  const req = createRequire(path.join(MODULES, 'noop.js'));
  try {
    const kysely = req('kysely') as {
      Kysely: new (config: { dialect: unknown }) => KyselyLike;
      PostgresDialect: new (config: { pool: unknown }) => unknown;
    };
    const { PGliteDialect } = req('kysely-pglite-dialect') as { PGliteDialect: new (pglite: unknown) => unknown };
    const version = (name: string) => (JSON.parse(fs.readFileSync(path.join(MODULES, name, 'package.json'), 'utf8')) as { version: string }).version;
    return {
      kyselyOnPostgres: (pool) => new kysely.Kysely({ dialect: new kysely.PostgresDialect({ pool }) }),
      kyselyOnPglite: (pglite) => new kysely.Kysely({ dialect: new PGliteDialect(pglite) }),
      versions: `kysely ${version('kysely')}, kysely-pglite-dialect ${version('kysely-pglite-dialect')}`,
    };
  } catch {
    return null;
  }
}

// ---- The statements. ----

/** get-batch.ts's READ_SQL, spelled as it spells it (the fixed statement's name is its text's hash). */
const READ_SELECT = withDetailColumns({ select: BATCH_ROW_COLUMNS as Prisma.BatchSelect }).select!;
const READ_FIELDS = Object.keys(READ_SELECT);
const READ_TEXT = `SELECT ${READ_FIELDS.map((f) => `"${snakeCase(f)}" AS "${f}"`).join(', ')} FROM batches WHERE id = $1 AND account_id = $2`;
const READ_SQL = fixedStatement(READ_TEXT);
const READ_COLUMNS = READ_FIELDS.map((f) => `${snakeCase(f)} as ${f}`);

/** The batch INSERT as it was measured (create-batch.ts INSERT_BATCH_SQL before the batch options): a fixed fixture, so figures stay comparable across runs. */
const INSERT_BATCH_SQL = `
INSERT INTO batches (id, account_id, agent_id, prompt_version_id, did_number_id, status, start_mode,
                     scheduled_at, timezone, concurrency, voice, interruption, use_alternate_number,
                     recording_enabled, max_duration_seconds, deduplicate_by_phone, callback_url, metadata,
                     idempotency_key, total_contacts, accepted_contacts, rejected_contacts, validation_errors,
                     queued, created_at, updated_at, retry_max_attempts, retry_on, retry_delay_seconds, expires_at,
                     calling_window, enforced_window, compliance_profiles)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8::timestamptz, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18::jsonb,
        $19, $20, $21, $22, $23::jsonb, $21, $24::timestamptz, $24::timestamptz, $25, $26::text[], $27, $28::timestamptz,
        $29::jsonb, $30::jsonb, $31::text[])
ON CONFLICT (account_id, idempotency_key) DO NOTHING
RETURNING id`;

interface Owner {
  account: Account;
  agentId: string;
  versionId: string;
  didNumberId: string;
  batchId: string;
}

/** One new batch's values, as create-batch.ts's batchRowParams computes them (a plausible batch). */
function batchValues(o: Owner) {
  const now = new Date();
  return {
    id: crypto.randomUUID(),
    accountId: o.account.id,
    agentId: o.agentId,
    promptVersionId: o.versionId,
    didNumberId: o.didNumberId,
    status: 'queued',
    startMode: 'now',
    scheduledAt: now,
    timezone: 'America/New_York',
    concurrency: 5,
    voice: 'alloy',
    interruption: true,
    useAlternateNumber: false,
    recordingEnabled: true,
    maxDurationSeconds: 600,
    deduplicateByPhone: true,
    callbackUrl: 'https://example.com/hook',
    metadata: { campaign: 'spring', owner: 'bench' },
    idempotencyKey: crypto.randomUUID(),
    totalContacts: 100,
    acceptedContacts: 100,
    rejectedContacts: 0,
    validationErrors: [] as unknown[],
    createdAt: now,
    retryMaxAttempts: 3,
    retryOn: ['no_answer', 'busy'],
    retryDelaySeconds: 900,
    expiresAt: null,
    callingWindow: { start: '09:00', end: '20:00', days: [1, 2, 3, 4, 5], timezone: 'recipient' },
    enforcedWindow: null,
    complianceProfiles: ['us_tcpa'],
  };
}
type BatchValues = ReturnType<typeof batchValues>;

const insertParams = (v: BatchValues): unknown[] => [
  v.id,
  v.accountId,
  v.agentId,
  v.promptVersionId,
  v.didNumberId,
  v.status,
  v.startMode,
  v.scheduledAt.toISOString(),
  v.timezone,
  v.concurrency,
  v.voice,
  v.interruption,
  v.useAlternateNumber,
  v.recordingEnabled,
  v.maxDurationSeconds,
  v.deduplicateByPhone,
  v.callbackUrl,
  JSON.stringify(v.metadata),
  v.idempotencyKey,
  v.totalContacts,
  v.acceptedContacts,
  v.rejectedContacts,
  JSON.stringify(v.validationErrors),
  v.createdAt.toISOString(),
  v.retryMaxAttempts,
  v.retryOn,
  v.retryDelaySeconds,
  v.expiresAt,
  JSON.stringify(v.callingWindow),
  v.enforcedWindow,
  v.complianceProfiles,
];

const INSERT_COLUMNS = INSERT_BATCH_SQL.slice(INSERT_BATCH_SQL.indexOf('(') + 1, INSERT_BATCH_SQL.indexOf(')'))
  .split(',')
  .map((c) => c.trim());
// VALUES reuses $21 (queued) and $24 (updated_at): 33 columns from 31 parameters.
const INSERT_SLOTS = [...Array(23).keys(), 20, 23, 23, 24, 25, 26, 27, 28, 29, 30];

/** The same row as Kysely values: snake_case columns, JSON as text (the column's type reads it). */
function kyselyRow(v: BatchValues): Record<string, unknown> {
  const p = insertParams(v);
  return Object.fromEntries(INSERT_COLUMNS.map((c, i) => [c, p[INSERT_SLOTS[i]!]]));
}

/** The same row as Prisma's create data (a null Json column is left to its default, null). */
function prismaRow(v: BatchValues): Prisma.BatchUncheckedCreateInput {
  const { enforcedWindow: _none, validationErrors, ...rest } = v;
  return { ...rest, validationErrors: validationErrors as Prisma.InputJsonValue[], updatedAt: v.createdAt, queued: v.acceptedContacts };
}

// ---- Measurement. ----

interface Variant {
  statement: 'read' | 'insert';
  name: string;
  /** Today's path, which the others are compared with. */
  baseline?: boolean;
  /** Builds only, runs nothing. */
  compileOnly?: boolean;
  run(): Promise<unknown> | unknown;
}

interface Sample {
  cpuUs: number;
  wallUs: number;
}

async function measure(v: Variant, n: number): Promise<Sample> {
  for (let i = 0; i < WARMUP; i++) await v.run();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await v.run();
  const wallUs = ((performance.now() - t0) * 1000) / n;
  const cpu = process.cpuUsage(cpu0);
  return { cpuUs: (cpu.user + cpu.system) / n, wallUs };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

async function seed(db: Database): Promise<Owner> {
  const { account } = await createAccount(db, { name: 'Bench Co', email: 'bench@example.com', voices: ['alloy'] });
  const agent = await createAgent(db, account, { name: 'Bench agent', voice: 'alloy' });
  const version = await createPromptVersion(db, account, { agentId: agent.id, name: 'v1', prompt: 'Hello.' });
  const did = await addDidNumber(db, account, '+14155550100');
  const owner = { account, agentId: agent.id, versionId: version.id, didNumberId: did.id, batchId: '' };
  // The batch the read reads, among some others of the account (the primary key finds it).
  for (let i = 0; i < 200; i++) {
    const v = batchValues(owner);
    await runStatement(db, INSERT_BATCH_SQL, insertParams(v));
    if (i === 100) owner.batchId = v.id;
  }
  return owner;
}

function variants(db: Database, k: KyselyLike, o: Owner): Variant[] {
  const id = o.batchId;
  const accountId = o.account.id;
  const kRead = () => k.selectFrom('batches').select(READ_COLUMNS).where('id', '=', id).where('account_id', '=', accountId);
  const kInsert = () =>
    k
      .insertInto('batches')
      .values(kyselyRow(batchValues(o)))
      .onConflict((oc) => oc.columns(['account_id', 'idempotency_key']).doNothing())
      .returning('id');
  const list: Variant[] = [
    { statement: 'read', name: 'today: fixed statement', baseline: true, run: () => runStatement(db, READ_SQL, [id, accountId]) },
    { statement: 'read', name: 'kysely select', run: () => kRead().executeTakeFirst() },
    { statement: 'read', name: 'kysely compile only', compileOnly: true, run: () => kRead().compile() },
    {
      statement: 'read',
      name: 'prisma findUnique',
      run: () => db.prisma.batch.findUnique({ where: { id, accountId }, select: READ_SELECT }),
    },
    {
      statement: 'insert',
      name: 'today: runStatement text',
      baseline: true,
      run: () => runStatement(db, INSERT_BATCH_SQL, insertParams(batchValues(o))),
    },
    { statement: 'insert', name: 'kysely insertInto', run: () => kInsert().executeTakeFirst() },
    { statement: 'insert', name: 'kysely compile only', compileOnly: true, run: () => kInsert().compile() },
    {
      statement: 'insert',
      name: 'prisma create (no ON CONFLICT)',
      run: () => db.prisma.batch.create({ data: prismaRow(batchValues(o)), select: { id: true } }),
    },
  ];
  // On PostgreSQL the read's text unprepared too: what a builder's per-call text costs without a name.
  if (db.kind === 'postgres')
    list.splice(1, 0, { statement: 'read', name: 'same text unprepared', run: () => runStatement(db, READ_TEXT, [id, accountId]) });
  return list;
}

/**
 * The plan PostgreSQL runs the fixed read with on the bench's one connection, after the round: after
 * five runs it may keep a generic plan, chosen from the statistics of the moment; the ANALYZE
 * before each round (as autovacuum would) makes it plan again.
 */
async function fixedPlan(db: Database, o: Owner): Promise<string> {
  if (!db.pool) return '';
  const literal = (v: string) => `'${v.replaceAll("'", "''")}'`;
  const { rows } = await db.pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE ${READ_SQL.name}(${literal(o.batchId)}, ${literal(o.account.id)})`);
  return `; the fixed read's plan: ${rows[0]?.['QUERY PLAN'].replace(/\s+\(cost.*$/, '')}`;
}

/** The same row from each read path (the bench compares like with like). */
async function checkReadsAgree(db: Database, k: KyselyLike, o: Owner): Promise<void> {
  const norm = (r: unknown) => JSON.stringify(r, Object.keys(r as object).sort());
  const [today] = await runStatement(db, READ_SQL, [o.batchId, o.account.id]);
  const viaKysely = await k
    .selectFrom('batches')
    .select(READ_COLUMNS)
    .where('id', '=', o.batchId)
    .where('account_id', '=', o.account.id)
    .executeTakeFirst();
  const viaPrisma = await db.prisma.batch.findUnique({ where: { id: o.batchId, accountId: o.account.id }, select: READ_SELECT });
  const agree = norm(today) === norm(viaKysely) && norm(today) === norm(viaPrisma);
  console.log(`  read: ${READ_FIELDS.length} columns; the three paths return the same row: ${agree ? 'yes' : 'NO'}`);
  const c = k
    .insertInto('batches')
    .values(kyselyRow(batchValues(o)))
    .returning('id')
    .compile();
  console.log(`  insert: today ${insertParams(batchValues(o)).length} parameters, Kysely ${c.parameters.length}`);
}

async function benchTarget(label: string, db: Database, k: KyselyLike): Promise<void> {
  console.log(`\n== ${label} ==`);
  const owner = await seed(db);
  await checkReadsAgree(db, k, owner);
  const list = variants(db, k, owner);
  const samples = new Map<Variant, Sample[]>(list.map((v) => [v, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = list.map((_, i) => list[(i + round) % list.length]!);
    // The inserts grow the table by ~10,000 rows a round; autovacuum (off on some bench servers) would analyze it.
    if (ANALYZE) await runStatement(db, 'ANALYZE batches');
    const before = load();
    for (const v of order) samples.get(v)!.push(await measure(v, STATEMENTS));
    console.log(`  round ${round + 1}/${ROUNDS}: load ${before} -> ${load()}${await fixedPlan(db, owner)}`);
  }
  for (const statement of ['read', 'insert'] as const) {
    const rows = list.filter((v) => v.statement === statement);
    const base = rows.find((v) => v.baseline)!;
    const baseCpu = median(samples.get(base)!.map((s) => s.cpuUs));
    const baseWall = median(samples.get(base)!.map((s) => s.wallUs));
    console.log(`\n  ${label} ${statement} (${STATEMENTS} sequential statements a round, median of ${ROUNDS} rounds; min-max in brackets)`);
    console.log("  (x today: the variant over today's path; a compile-only row: the build alone, as a share of today's whole statement)");
    console.log(
      `  ${'variant'.padEnd(32)} ${'client CPU µs'.padStart(22)} ${'x today'.padStart(8)} ${'wall µs'.padStart(22)} ${'x today'.padStart(8)}`,
    );
    for (const v of rows) {
      const s = samples.get(v)!;
      const cpu = s.map((x) => x.cpuUs);
      const wall = s.map((x) => x.wallUs);
      const fmt = (xs: number[]) => `${median(xs).toFixed(1)} [${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)}]`;
      const ratio = (x: number, b: number) => (v.compileOnly ? `+${((100 * x) / b).toFixed(0)}%` : `${(x / b).toFixed(2)}`);
      console.log(
        `  ${v.name.padEnd(32)} ${fmt(cpu).padStart(22)} ${ratio(median(cpu), baseCpu).padStart(8)} ${fmt(wall).padStart(22)} ${ratio(median(wall), baseWall).padStart(8)}`,
      );
    }
  }
}

async function main(): Promise<void> {
  const candidates = loadCandidates();
  if (!candidates) {
    console.log(`bench:query-layers: kysely and kysely-pglite-dialect are not installed in ${MODULES}; they are not dependencies of the service.`);
    console.log('Install them outside the repo, then run the bench again:');
    console.log('  mkdir -p /tmp/qb && cd /tmp/qb && npm init -y && npm install --ignore-scripts --legacy-peer-deps kysely kysely-pglite-dialect');
    console.log('(or set BENCH_QB_MODULES to a node_modules that holds them)');
    return;
  }
  console.log(`query layers: ${candidates.versions}; Node ${process.version}; ${os.cpus().length} cores; load ${load()}`);
  console.log(`${STATEMENTS} statements a variant and round, ${WARMUP} warm-up, ${ROUNDS} rounds alternating (order rotated)`);

  if (TARGETS.has('postgres')) {
    const created = await throwawayDatabase(BASE_URL, 'qb_bench');
    try {
      // One connection: every variant's statements on the same backend, prepared ones stay prepared.
      const db = await openDatabase({ databaseUrl: created.url, poolSize: 1 });
      try {
        await migrate(db);
        // The inserts commit one by one: without the WAL flush their time is the statements'.
        await db.pool!.query(`ALTER DATABASE "${new URL(created.url).pathname.slice(1)}" SET synchronous_commit = off`);
        await db.pool!.query('SET synchronous_commit = off');
        await benchTarget('PostgreSQL', db, candidates.kyselyOnPostgres(db.pool!));
      } finally {
        await db.close();
      }
    } finally {
      await created.drop();
    }
  }
  if (TARGETS.has('pglite')) {
    const db = await openDatabase({ inMemory: true });
    try {
      await migrate(db);
      await benchTarget('PGlite (in memory)', db, candidates.kyselyOnPglite(db.pglite!));
    } finally {
      await db.close();
    }
  }
  console.log(`\nload at the end: ${load()}`);
}

await main();
