// Fetches a provider-held recording for /recordings, streaming it through: the provider's URL never
// reaches the client. The URL came from the provider's call object, which an account could forge
// in a webhook signed with its own provider key, so the fetch is a pinned request under the callback
// URLs' SSRF rules: public addresses only (the providers' operator-configured origins excepted,
// VoiceProviderModule.recordings), the connection pinned to the checked address, no redirects.
// The deadline covers DNS, connect and the provider's answer; the audio then streams for as long
// as it keeps flowing (long recordings, slow listeners), cut only when the connection stalls.
import { Readable } from 'node:stream';
import { pinnedRequest } from '../services/webhooks/pinned-request.ts';

export type UpstreamRecording =
  | { ok: true; contentType: string | null; contentLength: string | null; body: ReadableStream<Uint8Array> }
  /** `status`: the provider's HTTP status; absent when it could not be reached (or was refused). */
  | { ok: false; status?: number; error: string };

export async function fetchRecording(
  rawUrl: string,
  opts: { trustedOrigin?: string | null; trustedOrigins?: readonly string[]; timeoutMs?: number; idleMs?: number },
): Promise<UpstreamRecording> {
  let allowPrivate: boolean;
  try {
    const origin = new URL(rawUrl).origin;
    const trusted = [...(opts.trustedOrigins ?? []), ...(opts.trustedOrigin ? [opts.trustedOrigin] : [])];
    allowPrivate = trusted.some((t) => new URL(t).origin === origin);
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
  const r = await pinnedRequest({ url: rawUrl, method: 'GET', allowPrivate, timeoutMs: opts.timeoutMs ?? 15_000, bodyIdleMs: opts.idleMs ?? 30_000 });
  if (!r.ok) return { ok: false, error: r.error };
  const res = r.res;
  const status = res.statusCode ?? 0;
  if (status !== 200) {
    res.resume();
    return { ok: false, status, error: `provider answered ${status}` };
  }
  return {
    ok: true,
    contentType: typeof res.headers['content-type'] === 'string' ? res.headers['content-type'] : null,
    contentLength: typeof res.headers['content-length'] === 'string' ? res.headers['content-length'] : null,
    body: Readable.toWeb(res) as ReadableStream<Uint8Array>,
  };
}
