// Use case: a provider-held recording's current address. Retell's recording_url may be a signed
// link that expires (agents with opt_in_signed_url, 24 h by default): when it stops working, the
// call is fetched again with get-call and the fresh recording_url replaces the stored one.
//
// Anyone holding a signed link of ours (webhook payloads carry them for 24 h) can make us ask
// Retell, so each call is refreshed at most once per REFRESH_EVERY_MS (concurrent requests share
// one get-call), through the process's cached Retell key and client. Keyed on the recording having
// a source: a Retell recording stays refreshable after its account switched providers.
import type { AppDeps } from '../../../deps.ts';
import type { RecordingSource } from '../provider-module.ts';
import type { RetellCallObject } from './call-mapping.ts';
import { retellAccess, type RetellAccess } from './from-config.ts';

type Deps = Pick<AppDeps, 'db' | 'appSecret' | 'config' | 'clock'>;

const REFRESH_EVERY_MS = 60_000;
const TRACKED_MAX = 10_000;

interface RefreshState {
  access: RetellAccess;
  /** Per call: when it was last asked about, and the answer (shared while under way). */
  recent: Map<string, { at: number; url: Promise<string | null> }>;
}

/**
 * One per API process (built with the app): it holds the refresh times and the Retell access. A
 * call's source is a fresh recording_url from get-call, or (asked again within REFRESH_EVERY_MS)
 * the one the last refresh stored; null when none.
 */
export function createRecordingRefresher(deps: Deps): RecordingSource {
  const s: RefreshState = { access: retellAccess(deps), recent: new Map() };
  return {
    currentSource(callId) {
      const now = deps.clock.now().getTime();
      const hit = s.recent.get(callId);
      if (hit && now - hit.at < REFRESH_EVERY_MS) return hit.url.then(() => storedSource(deps, callId));
      const url = fetchFreshSource(deps, s.access, callId);
      s.recent.set(callId, { at: now, url });
      if (s.recent.size > TRACKED_MAX) for (const [k, v] of s.recent) if (now - v.at >= REFRESH_EVERY_MS) s.recent.delete(k);
      return url;
    },
  };
}

async function fetchFreshSource(deps: Deps, access: RetellAccess, callId: string): Promise<string | null> {
  const rows = await deps.db.prisma.$queryRaw<{ account_id: string; provider_call_id: string | null }[]>`
    SELECT c.account_id, c.provider_call_id
      FROM recordings r JOIN calls c ON c.id = r.call_id
     WHERE r.call_id = ${callId} AND r.source_url IS NOT NULL`;
  const row = rows[0];
  if (!row?.provider_call_id) return null;
  const apiKey = (await access.account(row.account_id))?.apiKey;
  if (!apiKey) return null;
  const call = (await access.client(apiKey).call.retrieve(row.provider_call_id)) as unknown as RetellCallObject;
  const url = call.recording_url ?? null;
  if (url) await deps.db.prisma.recording.updateMany({ where: { callId, sourceUrl: { not: null } }, data: { sourceUrl: url } });
  return url;
}

async function storedSource(deps: Deps, callId: string): Promise<string | null> {
  return (await deps.db.prisma.recording.findUnique({ where: { callId }, select: { sourceUrl: true } }))?.sourceUrl ?? null;
}
