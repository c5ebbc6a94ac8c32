// Benchmarks start servers and workers the way `npm start` / `npm run worker` do: the V8 flags of
// package.json's start and worker scripts (the heap cap changes peak RSS a lot, see
// docs/operations.md "Configuration"; the API's --no-allocation-site-pretenuring, docs/development.md).
import fs from 'node:fs';

const { scripts } = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };

const V8_FLAG = /^--(max-(old|semi)-space-size=\d+|no-allocation-site-pretenuring)$/;
const flagsOf = (script: string): string[] => scripts[script].split(/\s+/).filter((a) => V8_FLAG.test(a));

/** `npm start`'s (the API, and the worker in its process by default). */
export const SERVER_NODE_FLAGS: string[] = flagsOf('start');
/** `npm run worker`'s. */
export const WORKER_NODE_FLAGS: string[] = flagsOf('worker');
