import { defineConfig } from 'vitest/config';

export default defineConfig({
  // graphql ships ESM and CJS builds; libraries that require() it and our ESM imports must share one copy.
  resolve: { alias: { graphql: 'graphql/index.js' } },
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // expect.poll waits for a condition: a deadline a loaded CI machine meets (the default is 1 s).
    expect: { poll: { timeout: 20_000 } },
    pool: 'forks',
    reporters: ['default'],
  },
});
