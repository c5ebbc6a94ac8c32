// In-memory static files (the dashboard's bundle, GraphiQL's): a strong ETag from the content and
// conditional GET/HEAD answered without the body.
import crypto from 'node:crypto';
import { json } from './responses.ts';

export interface Asset {
  body: Uint8Array;
  type: string;
  etag: string;
}

/** Base64url SHA-256 of the content, cut to 22 characters (132 bits). */
const contentHash = (body: Uint8Array) => crypto.createHash('sha256').update(body).digest('base64url').slice(0, 22);

export function assetOf(body: Uint8Array | string, type: string): Asset {
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  return { body: bytes, type, etag: `"${contentHash(bytes)}"` };
}

export function assetResponse(request: Request, asset: Asset, cacheControl: string, extra: Record<string, string> = {}): Response {
  const headers = { 'content-type': asset.type, 'cache-control': cacheControl, etag: asset.etag, ...extra };
  if (request.headers.get('if-none-match') === asset.etag) return new Response(null, { status: 304, headers });
  return new Response(request.method === 'HEAD' ? null : (asset.body as Uint8Array<ArrayBuffer>), { status: 200, headers });
}

/** `<prefix><stem>-<content hash><ext>`: a name whose content never changes, so it caches forever. */
export function addHashed(assets: Map<string, Asset>, prefix: string, stem: string, ext: string, asset: Asset): string {
  const name = `${stem}-${asset.etag.slice(1, -1)}${ext}`;
  assets.set(name, asset);
  return prefix + name;
}

/** GET/HEAD of a content-hashed asset under `prefix`: immutable, 404 for an unknown name, 405 for writes. */
export function serveHashed(
  request: Request,
  assets: Map<string, Asset>,
  prefix: string,
  pathname: string,
  extra: Record<string, string> = {},
): Response {
  if (request.method !== 'GET' && request.method !== 'HEAD') return json(405, { detail: 'Method Not Allowed' });
  const asset = assets.get(pathname.slice(prefix.length));
  if (!asset) return json(404, { detail: 'Not Found' });
  return assetResponse(request, asset, 'public, max-age=31536000, immutable', extra);
}

/** Runs `load` on first call and keeps its result; a failure is not kept, so the next call tries again. */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () =>
    (loaded ??= load().catch((err: unknown) => {
      loaded = undefined;
      throw err;
    }));
}
