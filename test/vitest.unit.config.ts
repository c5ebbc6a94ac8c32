import { configDefaults, defineConfig } from 'vitest/config';

// `npm run test:unit`: the pure layer — src/domain and every other module whose tests need no database,
// server, child process or network (rules, parsers, formatters, the simulator, the write queue on fake
// timers, the shared CSV code in src/csv) — with no global setup, so a change to a rule is checked in
// well under a minute. `npm test` runs these files too. A new test of a pure module belongs in this list.
export const PURE_TESTS = [
  'test/domain/**/*.test.ts',
  'test/csv/**/*.test.ts',
  'test/abuse/key-cache.test.ts',
  'test/batches-create/create-body.test.ts',
  'test/batches-create/insert-calls.test.ts',
  'test/batches-create/phone-rules.test.ts',
  'test/campaigns/dial-permission.test.ts',
  'test/dispatch/local-analyser.test.ts',
  'test/dispatch/simulator.test.ts',
  'test/dispatch/units.test.ts',
  'test/dispatch/wav.test.ts',
  'test/foundation/config.test.ts',
  'test/foundation/timestamp-parser.test.ts',
  'test/foundation/window-spec.test.ts',
  'test/subscriptions/live-sessions.test.ts',
  'test/subscriptions/socket-pump.test.ts',
  'test/web/live-reads.test.ts',
  'test/web/pace.test.ts',
  'test/web/window-text.test.ts',
  'test/webhooks/retry.test.ts',
  'test/webhooks/signing.test.ts',
  'test/webhooks/url-safety.test.ts',
];

export default defineConfig({
  resolve: { alias: { graphql: 'graphql/index.js' } },
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: PURE_TESTS,
    // Wall-clock budgets run in the main config's timed project only.
    exclude: [...configDefaults.exclude, 'test/**/*.timed.test.ts'],
    pool: 'threads',
    // As in the main config: a property test's thousands of cases on a loaded 2-core machine take seconds.
    testTimeout: 30_000,
  },
});
