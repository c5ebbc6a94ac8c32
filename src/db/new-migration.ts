// `npm run db:migration -- <name>`: writes prisma/migrations/<timestamp>_<name>/migration.sql by
// diffing the committed schema (HEAD) against the edited one. `prisma migrate dev` can't run on the
// PGlite adapter, and a schema-to-schema diff needs no database at all.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MIGRATIONS_DIR } from './migrate.ts';

const name = (process.argv[2] ?? '').replace(/[^a-z0-9_]+/gi, '_').toLowerCase();
if (!name) {
  console.error('usage: npm run db:migration -- <name>');
  process.exit(2);
}
const root = path.resolve(MIGRATIONS_DIR, '../..');
const schemaPath = path.join(root, 'prisma/schema.prisma');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'schema-'));
const before = path.join(tmp, 'schema.prisma');
let committed = '';
try {
  committed = execFileSync('git', ['show', 'HEAD:prisma/schema.prisma'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
} catch {
  // No commit yet: diff from an empty database.
}
fs.writeFileSync(before, committed);
const args = ['prisma', 'migrate', 'diff', '--config', 'prisma/prisma.config.ts'];
args.push(...(committed ? ['--from-schema-datamodel', before] : ['--from-empty']));
args.push('--to-schema-datamodel', schemaPath, '--script');
const sql = execFileSync('npx', args, { cwd: root, encoding: 'utf8' });
if (!/\b(CREATE|ALTER|DROP)\b/.test(sql)) {
  console.log('schema unchanged: no migration written');
  process.exit(0);
}
// Migrations run in name order: a new one's stamp follows the newest already there, even when
// that one was stamped ahead of this machine's clock.
const newest = fs
  .readdirSync(MIGRATIONS_DIR)
  .map((d) => /^(\d{14})_/.exec(d)?.[1])
  .filter((d): d is string => !!d)
  .sort()
  .at(-1);
const now = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
const stamp = newest && newest >= now ? String(BigInt(newest) + 1n) : now;
const dir = path.join(MIGRATIONS_DIR, `${stamp}_${name}`);
fs.mkdirSync(dir, { recursive: true });
fs.writeFileSync(path.join(dir, 'migration.sql'), sql);
console.log(`wrote ${path.relative(root, dir)}/migration.sql`);
