import { configDefaults, defineConfig } from 'vitest/config';

// `npm run test:unit`: the pure layer (src/domain, and src/csv: the CSV reader and writer), with no database, server or global setup, so a change
// to a rule is checked in well under a minute. `npm test` runs these files too.
export default defineConfig({
  resolve: { alias: { graphql: 'graphql/index.js' } },
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['test/domain/**/*.test.ts', 'test/csv/**/*.test.ts'],
    exclude: configDefaults.exclude,
    pool: 'threads',
  },
});
