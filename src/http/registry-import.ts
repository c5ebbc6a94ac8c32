// The operator's imports of the national do-not-call registry and of reassigned-number results
// (docs/operations.md "Registry imports"), for the CLI: admin token only. A body is one part of a
// file (at most MAX_REGISTRY_PART_BYTES; the CLI splits larger files at line ends), read as it
// arrives and never held whole.
//   POST /admin/registry/numbers?mode=add|remove|full[&since=ISO][&first_line=N]   body: text lines
//   POST /admin/registry/numbers?mode=begin                  → {since}: a full import's start
//   POST /admin/registry/numbers?mode=finish&since=ISO&area_codes=201,202
//   POST /admin/registry/reassigned[?first_line=N]           body: `<number>,<YYYY-MM-DD>` lines
import type { AppDeps } from '../deps.ts';
import { bearerToken } from '../services/auth/api-keys.ts';
import { isAdminToken } from '../services/auth/admin-token.ts';
import { MAX_REGISTRY_PART_BYTES, REGISTRY_IMPORT_MODES, type RegistryImportMode } from '../domain/registry.ts';
import { parseInstant } from '../domain/retry-policy.ts';
import { finishFullImport, importReassignedNumbers, importRegistryNumbers, registryClock } from '../services/registry/import-registry.ts';
import { json } from './responses.ts';

export const REGISTRY_NUMBERS_PATH = '/admin/registry/numbers';
export const REGISTRY_REASSIGNED_PATH = '/admin/registry/reassigned';
/** Area codes one finish may name: every NANP area code fits. */
const MAX_AREA_CODES = 1_000;

class PartTooLarge extends Error {}

/** The body's chunks, refused past the part bound as they arrive. */
async function* boundedBody(request: Request): AsyncGenerator<Uint8Array> {
  if (!request.body) return;
  let read = 0;
  for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
    read += chunk.length;
    if (read > MAX_REGISTRY_PART_BYTES) throw new PartTooLarge();
    yield chunk;
  }
}

const refuse = (status: number, detail: string) => json(status, { detail });

function firstLine(url: URL): number | null | undefined {
  const v = url.searchParams.get('first_line');
  if (v === null) return undefined;
  return /^\d{1,12}$/.test(v) && Number(v) >= 1 ? Number(v) : null;
}

export async function handleRegistryImport(deps: Pick<AppDeps, 'db' | 'config'>, request: Request, url: URL): Promise<Response> {
  if (!isAdminToken(deps, bearerToken(request.headers.get('authorization')))) return refuse(401, 'The admin token is required');
  if (request.method !== 'POST') return refuse(405, 'Method Not Allowed');
  const from = firstLine(url);
  if (from === null) return refuse(422, 'query.first_line: Input should be a positive integer');
  try {
    if (url.pathname === REGISTRY_REASSIGNED_PATH) {
      return json(200, await importReassignedNumbers(deps.db, boundedBody(request), { firstLine: from }));
    }
    const mode = url.searchParams.get('mode') ?? 'add';
    if (mode === 'begin') return json(200, { since: await registryClock(deps.db) });
    // Passed on as text: begin's answer holds microseconds, which a Date would cut.
    const since = url.searchParams.get('since');
    if (since !== null && parseInstant(since) === null) return refuse(422, 'query.since: Invalid datetime, expected ISO 8601 with a time zone');
    if (mode === 'finish') {
      const codes = (url.searchParams.get('area_codes') ?? '').split(',').filter(Boolean);
      if (since === null) return refuse(422, 'query.since: Field required (the since of mode=begin)');
      if (codes.length > MAX_AREA_CODES || codes.some((c) => !/^[2-9]\d\d$/.test(c))) {
        return refuse(422, `query.area_codes: at most ${MAX_AREA_CODES} three-digit area codes, comma-separated`);
      }
      return json(200, { removedBlocks: await finishFullImport(deps.db, since, codes.map(Number)) });
    }
    if (!(REGISTRY_IMPORT_MODES as readonly string[]).includes(mode)) {
      return refuse(422, `query.mode: Input should be ${['begin', 'finish', ...REGISTRY_IMPORT_MODES].map((m) => `'${m}'`).join(', ')}`);
    }
    if (mode === 'full' && since === null) return refuse(422, 'query.since: Field required for mode=full (the since of mode=begin)');
    return json(
      200,
      await importRegistryNumbers(deps.db, boundedBody(request), { mode: mode as RegistryImportMode, since: since ?? undefined, firstLine: from }),
    );
  } catch (e) {
    if (e instanceof PartTooLarge) return refuse(413, `A part holds at most ${MAX_REGISTRY_PART_BYTES} bytes; split the file at line ends`);
    throw e;
  }
}
