import os from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

// These suites always run on a PGlite data directory of their own, whatever TEST_DATABASE_URL says
// (the embedded start, its directory lock, the CLI, a worker's own listener): on the PostgreSQL pass they
// would repeat the PGlite pass exactly, so that pass leaves them out.
const PGLITE_ONLY = [
  'test/foundation/process.test.ts',
  'test/foundation/data-dir-lock.test.ts',
  'test/foundation/cli.test.ts',
  'test/foundation/cli-keys.test.ts',
  'test/foundation/cli-batches.test.ts',
  'test/foundation/cli-examples.test.ts',
  'test/foundation/cli-suppressions.test.ts',
  'test/foundation/worker-ops.test.ts',
  'test/docs/examples-run.test.ts',
  'test/docs/webhook-receiver.test.ts',
  'test/examples/graphql-client.test.ts',
];

// The only tests that assert wall-clock budgets (an operation took less than N ms): how long the server
// takes over a CPU-bound computation (a hostile document or body, a full cost budget), answers beside
// bulk reads, deadlines on slow clients and a database outage. They run alone, after the rest, so that
// no other suite's load is measured. A budget in a file of functional tests goes in a `*.timed.test.ts`
// file beside it; everywhere else a test waits for a condition or moves an injected clock.
const TIMED = [
  'test/**/*.timed.test.ts',
  'test/abuse/document-fuzz.test.ts',
  'test/abuse/fragment-bombs.test.ts',
  'test/abuse/create-bounds.test.ts',
  'test/abuse/parse-bounds.test.ts',
  'test/abuse/body-shares.test.ts',
  'test/batches-read/export-limits.test.ts',
  'test/suppressions/list-scale.test.ts',
  'test/dispatch/database-outage.test.ts',
  'test/foundation/db-connect-timeout.test.ts',
];

export default defineConfig({
  // graphql ships ESM and CJS builds; libraries that require() it and our ESM imports must share one copy.
  resolve: { alias: { graphql: 'graphql/index.js' } },
  test: {
    root: new URL('..', import.meta.url).pathname,
    exclude: [...configDefaults.exclude, ...(process.env.TEST_DATABASE_URL ? PGLITE_ONLY : [])],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // expect.poll waits for a condition: a deadline a loaded CI machine meets (the default is 1 s).
    expect: { poll: { timeout: 20_000 } },
    // Every REST response fetched over real HTTP is checked against the OpenAPI document.
    setupFiles: ['test/helpers/rest-contract-setup.ts'],
    // Migrates one template database per run; each suite's database is a copy of it.
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    reporters: ['default'],
    projects: [
      {
        extends: true,
        // Vitest's default is a worker per core less one: a single worker on CI's 2 cores, idle while its
        // file waits on child processes, sockets and timers. Two files at once; CPU-bound ones then share.
        test: { name: 'suites', include: ['test/**/*.test.ts'], exclude: TIMED, maxWorkers: Math.max(2, os.availableParallelism() - 1) },
      },
      { extends: true, test: { name: 'timed', include: TIMED, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
