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
    layer('the-browser-bundle-stands-alone', '^src/web/', '^src/(?!web/|codegen/)'),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/generated/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
