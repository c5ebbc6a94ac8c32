// Security headers on every response. Nothing of this service is meant to be framed, so framing is
// denied everywhere. HTML pages (GraphiQL, the dashboard) get a Content-Security-Policy that
// allows this origin and exactly their own inline scripts (by hash, computed from the page as
// served): nothing is loaded from another host. API responses get a policy that allows nothing.
import crypto from 'node:crypto';

const COMMON: Record<string, string> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
};

/** For JSON, audio and anything else that is not a page: no scripts, no framing. */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'";

export function pageCsp(scriptHashes: string[]): string {
  const hashes = scriptHashes.map((h) => `'sha256-${h}'`);
  return [
    "default-src 'self'",
    ['script-src', "'self'", ...hashes].join(' '),
    // Editors inject style elements at runtime.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Base64 SHA-256 of each inline (src-less) script element's text, as CSP hash sources. */
export function inlineScriptHashes(html: string): string[] {
  const hashes: string[] = [];
  for (const m of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script\s*>/gi)) {
    if (/\bsrc\s*=/i.test(m[1]) || !m[2]) continue;
    hashes.push(crypto.createHash('sha256').update(m[2], 'utf8').digest('base64'));
  }
  return [...new Set(hashes)];
}

/** A Response whose headers can be changed (responses from some producers are immutable). */
function mutable(response: Response): Response {
  try {
    response.headers.set('x-content-type-options', 'nosniff');
    return response;
  } catch {
    return new Response(response.body, response);
  }
}

export async function applySecurityHeaders(request: Request, response: Response, opts: { hsts: boolean }): Promise<Response> {
  let res = mutable(response);
  const type = res.headers.get('content-type') ?? '';
  if (/^text\/html\b/i.test(type) && res.body) {
    const html = await res.text();
    const headers = new Headers(res.headers);
    headers.set('content-security-policy', pageCsp(inlineScriptHashes(html)));
    res = new Response(html, { status: res.status, statusText: res.statusText, headers });
  } else if (/^text\/html\b/i.test(type)) {
    // HEAD or 304 of a page: a cache may merge these headers into the stored page, so the policy
    // must be a page policy too (pages with inline scripts are not served bodiless here).
    res.headers.set('content-security-policy', pageCsp([]));
  } else if (!res.headers.has('content-security-policy')) {
    res.headers.set('content-security-policy', API_CSP);
  }
  for (const [name, value] of Object.entries(COMMON)) res.headers.set(name, value);
  if (opts.hsts) res.headers.set('strict-transport-security', 'max-age=31536000');
  res.headers.delete('x-powered-by');
  // Authenticated API data must not sit in shared caches.
  if (!res.headers.has('cache-control') && !/^text\/html\b/i.test(type)) res.headers.set('cache-control', 'no-store');
  return res;
}
