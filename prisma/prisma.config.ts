// Prisma CLI config. The CLI only generates the client and diffs schemas; migrations are applied
// in-process by src/db/migrate.ts. The JS schema engine (bundled WASM) runs against an in-memory
// PGlite, so no native engine is ever downloaded.
import path from 'node:path';
import { defineConfig } from 'prisma/config';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';

export default defineConfig({
  experimental: { adapter: true },
  schema: path.join(import.meta.dirname, 'schema.prisma'),
  migrations: { path: path.join(import.meta.dirname, 'migrations') },
  engine: 'js',
  // pglite-prisma-adapter is typed against an older driver-adapter-utils; the runtime protocol matches.
  adapter: async () => new PrismaPGlite(new PGlite()) as never,
});
