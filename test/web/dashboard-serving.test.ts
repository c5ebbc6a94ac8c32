// How the app serves the dashboard: the page at / and /dashboard, its bundle (built from src/web by
// esbuild on first request, kept in memory) under content-hashed names that cache forever.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const get = (path: string, headers: Record<string, string> = {}) => t.app.fetch(new Request(`http://test.local${path}`, { headers }));

describe('dashboard serving', () => {
  it('serves the page at / and /dashboard with a script-only-from-self policy', async () => {
    for (const path of ['/', '/dashboard', '/dashboard/']) {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      const csp = res.headers.get('content-security-policy')!;
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-eval');
      const html = await res.text();
      expect(html).toMatch(/<script type="module" src="\/dashboard\/assets\/app-[A-Z0-9]+\.js"><\/script>/);
      expect(html).not.toMatch(/<script>(?!<)/);
      // If the script never starts, the boot screen says so after a while (CSS only).
      expect(html).toContain('class="boot boot-slow"');
      expect(html).toMatch(/\.boot-slow\{visibility:hidden;animation:boot-slow 0s 10s forwards\}/);
    }
  });

  it('serves the bundle and styles from memory, immutable, with ETags', async () => {
    const html = await (await get('/')).text();
    const assets = [...html.matchAll(/(?:src|href)="(\/dashboard\/assets\/[^"]+)"/g)].map((m) => m[1]);
    expect(assets.some((a) => a.endsWith('.js'))).toBe(true);
    expect(assets.some((a) => a.endsWith('.css'))).toBe(true);
    for (const a of assets) {
      const res = await get(a);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(a.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      const body = await res.text();
      expect(body.length).toBeGreaterThan(1000);
      const again = await get(a, { 'if-none-match': res.headers.get('etag')! });
      expect(again.status).toBe(304);
    }
    const js = await (await get(assets.find((a) => a.endsWith('.js'))!)).text();
    // The typed documents and the WebSocket client are inside the bundle.
    expect(js).toContain('DashboardBatchProgress');
    expect(js).toContain('graphql-transport-ws');
  });

  it('answers 404 for unknown assets and 405 for writes', async () => {
    expect((await get('/dashboard/assets/app-NOPE.js')).status).toBe(404);
    const post = await t.app.fetch(new Request('http://test.local/dashboard', { method: 'POST', body: 'x' }));
    expect(post.status).toBe(405);
  });
});
