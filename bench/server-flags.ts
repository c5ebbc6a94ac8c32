// Benchmarks start servers and workers the way `npm start` / `npm run worker` do: the V8 flags of
// package.json's start script (the heap cap changes peak RSS a lot, see docs/operations.md "Configuration").
import fs from 'node:fs';

const { scripts } = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };

export const SERVER_NODE_FLAGS: string[] = scripts.start.split(/\s+/).filter((a) => /^--max-(old|semi)-space-size=/.test(a));
