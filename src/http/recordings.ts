import type { ApiDeps } from './app-services.ts';
import { verifyRecordingSignature } from '../services/recording-url.ts';
import { json } from './responses.ts';
import { fetchRecording, type UpstreamRecording } from './recording-proxy.ts';

/** Provider answers meaning "this link no longer works" (an expired signed recording URL). */
const STALE_LINK = new Set([401, 403, 404, 410]);

/**
 * GET /recordings/<call_id>.wav?expires=…&signature=… — the signed link is the only credential.
 * Recordings we hold are served from the database; a provider-held one is proxied.
 */
export async function serveRecording(deps: ApiDeps, url: URL): Promise<Response> {
  const m = /^\/recordings\/(call_[0-9a-f]{32})\.wav$/.exec(url.pathname);
  if (!m) return json(404, { detail: 'Not Found' });
  const callId = m[1];
  if (!verifyRecordingSignature(deps, callId, url.searchParams.get('expires'), url.searchParams.get('signature'))) {
    return json(403, { detail: 'Recording link is invalid or has expired' });
  }
  const rec = await deps.db.prisma.recording.findUnique({ where: { callId } });
  if (rec?.data) {
    return new Response(rec.data, {
      status: 200,
      headers: { 'content-type': rec.contentType, 'cache-control': 'private, max-age=300', 'content-length': String(rec.data.byteLength) },
    });
  }
  if (!rec?.sourceUrl) return json(404, { detail: 'Recording not found' });
  const upstream = await proxied(deps, callId, rec.sourceUrl);
  if (!upstream.ok) {
    deps.logger.warn({ callId, status: upstream.status, error: upstream.error }, 'provider recording unavailable');
    return json(502, { detail: 'Recording is temporarily unavailable' });
  }
  const headers: Record<string, string> = {
    'content-type': upstream.contentType?.startsWith('audio/') ? upstream.contentType : rec.contentType,
    'cache-control': 'private, max-age=300',
  };
  if (upstream.contentLength) headers['content-length'] = upstream.contentLength;
  return new Response(upstream.body, { status: 200, headers });
}

async function proxied(deps: ApiDeps, callId: string, sourceUrl: string): Promise<UpstreamRecording> {
  const trustedOrigins = deps.recordings.trustedOrigins;
  const first = await fetchRecording(sourceUrl, { trustedOrigins });
  if (first.ok || first.status === undefined || !STALE_LINK.has(first.status)) return first;
  const fresh = await deps.recordings.currentSource(callId).catch((err: unknown) => {
    deps.logger.warn({ err, callId }, 'could not refresh the provider recording link');
    return null;
  });
  return fresh && fresh !== sourceUrl ? fetchRecording(fresh, { trustedOrigins }) : first;
}
