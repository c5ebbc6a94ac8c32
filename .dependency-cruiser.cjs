// The architecture's import rules, checked by `npm run lint` (docs/architecture.md explains the
// layers). Lower layers never import higher ones; type-only imports count too.
const layer = (name, path, mayNotImport) => ({
  name,
  severity: 'error',
  from: { path },
  to: { path: mayNotImport },
});
const TRANSPORTS = '^src/(http|rest|graphql|cli|web)/';
const ENTRY = '^src/(main|worker|app|bootstrap|background)\\.ts$';

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    {
      name: 'domain-is-pure',
      comment: 'domain/ is rules on values: no database, no I/O, no other layer.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/', pathNot: '^src/(domain/|errors\\.ts$)' },
    },
    layer('db-below-everything', '^src/db/', `^src/(services|dispatch|events)/|${TRANSPORTS}|${ENTRY}`),
    layer('events-below-services', '^src/events/', `^src/(services|dispatch)/|${TRANSPORTS}|${ENTRY}`),
    layer('services-below-dispatch-and-transports', '^src/services/', `^src/dispatch/|${TRANSPORTS}|${ENTRY}`),
    layer('dispatch-below-transports', '^src/dispatch/', `${TRANSPORTS}|${ENTRY}`),
    layer('http-helpers-below-rest-and-graphql', '^src/http/', `^src/(rest|graphql|cli)/|${ENTRY}`),
    layer('the-browser-bundle-stands-alone', '^src/web/', '^src/(?!web/|codegen/|csv/)'),
    {
      name: 'csv-stands-alone',
      comment:
        'csv/ is the CSV reader and writer the dashboard, the CLI and the exports share: it runs in the browser, so it imports nothing else of src/.',
      severity: 'error',
      from: { path: '^src/csv/' },
      to: { path: '^src/', pathNot: '^src/csv/' },
    },
    {
      name: 'services-batches-calls-webhooks-one-way',
      comment:
        'Among the service folders, batches uses calls and webhooks, and calls uses webhooks, never the other way: a batch operation moves its calls, a call change enqueues webhooks (shared pieces such as recording-url.ts sit in services/ itself).',
      severity: 'error',
      from: { path: '^src/services/(calls|webhooks)/' },
      to: { path: '^src/services/batches/' },
    },
    {
      name: 'services-webhooks-below-calls',
      comment: 'See services-batches-calls-webhooks-one-way.',
      severity: 'error',
      from: { path: '^src/services/webhooks/' },
      to: { path: '^src/services/calls/' },
    },
    {
      name: 'graphql-types-below-plugins',
      comment: 'The envelop plugins read the schema types (names, costs); the types never import a plugin.',
      severity: 'error',
      from: { path: '^src/graphql/types/' },
      to: { path: '^src/graphql/plugins/' },
    },
    {
      name: 'providers-only-through-the-registry',
      comment:
        'A voice provider is its folder under dispatch/voice/, reached only through its VoiceProviderModule listed in voice/registry.ts: nothing outside voice/ imports a provider folder.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/dispatch/voice/' },
      to: { path: '^src/dispatch/voice/[^/]+/' },
    },
    {
      name: 'providers-stand-apart',
      comment: 'A provider folder uses the shared voice/ modules, never another provider folder.',
      severity: 'error',
      from: { path: '^src/dispatch/voice/([^/]+)/' },
      to: { path: '^src/dispatch/voice/[^/]+/', pathNot: '^src/dispatch/voice/$1/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/generated/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
