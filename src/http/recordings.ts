import type { AppDeps } from '../deps.ts';
import { verifyRecordingSignature } from '../services/recording-url.ts';
import { json } from '../rest/envelope.ts';

/** GET /recordings/<call_id>.wav?expires=…&signature=… — the signed link is the only credential. */
export async function serveRecording(deps: AppDeps, url: URL): Promise<Response> {
  const m = /^\/recordings\/(call_[0-9a-f]{32})\.wav$/.exec(url.pathname);
  if (!m) return json(404, { detail: 'Not Found' });
  const callId = m[1];
  if (!verifyRecordingSignature(deps, callId, url.searchParams.get('expires'), url.searchParams.get('signature'))) {
    return json(403, { detail: 'Recording link is invalid or has expired' });
  }
  const rec = await deps.db.prisma.recording.findUnique({ where: { callId } });
  if (!rec?.data) return json(404, { detail: 'Recording not found' });
  return new Response(rec.data, {
    status: 200,
    headers: { 'content-type': rec.contentType, 'cache-control': 'private, max-age=300', 'content-length': String(rec.data.byteLength) },
  });
}
