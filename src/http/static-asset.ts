// In-memory static files (the dashboard's bundle, GraphiQL's): a strong ETag from the content and
// conditional GET/HEAD answered without the body.
import crypto from 'node:crypto';

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
