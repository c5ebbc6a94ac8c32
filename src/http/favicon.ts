// The pages' icon, inline as a data: URL (the pages' img-src allows data:), and the same SVG at
// /favicon.ico for what asks there anyway (GraphiQL, JSON answers opened in a tab, bookmarks).
import { json } from './responses.ts';
import { assetOf, assetResponse } from './static-asset.ts';

const SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#2563eb"/>' +
  '<path d="M4 5h8M4 8h8M4 11h5" stroke="#fff" stroke-width="1.6" stroke-linecap="round"/></svg>';

export const FAVICON_LINK = `<link rel="icon" type="image/svg+xml" href="data:image/svg+xml,${encodeURIComponent(SVG)}">`;

export const FAVICON_PATH = '/favicon.ico';

const ICON = assetOf(SVG, 'image/svg+xml');

/** GET/HEAD /favicon.ico: the SVG (browsers go by the type, not the name), cached for a day then revalidated by ETag. */
export function serveFavicon(request: Request): Response {
  if (request.method !== 'GET' && request.method !== 'HEAD') return json(405, { detail: 'Method Not Allowed' });
  return assetResponse(request, ICON, 'public, max-age=86400');
}
