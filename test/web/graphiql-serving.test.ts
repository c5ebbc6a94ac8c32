// How the app serves GraphiQL: a small page at /graphql (for a browser) that names its script,
// styles and editor workers under /graphiql/assets/, served from the installed package by content
// hash, so nothing comes from another host (test/abuse/csp-browser.test.ts runs it in Chromium).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const send = (path: string, init: RequestInit = {}) => t.app.fetch(new Request(`http://test.local${path}`, init));
const page = () => send('/graphql', { headers: { accept: 'text/html' } });

describe('GraphiQL serving', () => {
  it('serves a small page whose policy and references stay on this origin', async () => {
    const res = await page();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).not.toMatch(/https?:/);
    expect(csp).not.toContain('unsafe-eval');
    const html = await res.text();
    // The bundle and icon are referenced, not inlined (~9 MB and ~150 KB).
    expect(html.length).toBeLessThan(64 * 1024);
    expect(html).not.toMatch(/(src|href)="https?:/);
    const assets = [...html.matchAll(/\/graphiql\/assets\/[\w-]+\.(?:js|css|ico)/g)].map((m) => m[0]);
    // Icon, script, styles and the three Monaco workers.
    expect(new Set(assets).size).toBe(6);
  });

  it('serves each asset immutable with an ETag, 304 on a match, HEAD without a body; unknown names are 404, writes 405', async () => {
    const html = await (await page()).text();
    for (const a of new Set([...html.matchAll(/\/graphiql\/assets\/[\w-]+\.(?:js|css|ico)/g)].map((m) => m[0]))) {
      const res = await send(a);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(
        a.endsWith('.css') ? /^text\/css/ : a.endsWith('.ico') ? /^image\/x-icon/ : /^text\/javascript/,
      );
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(1000);
      const etag = res.headers.get('etag')!;
      expect(a).toContain(etag.slice(1, -1));
      expect((await send(a, { headers: { 'if-none-match': etag } })).status).toBe(304);
      const head = await send(a, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(await head.text()).toBe('');
    }
    expect((await send('/graphiql/assets/graphiql-nope.js')).status).toBe(404);
    expect((await send('/graphiql/assets/graphiql-nope.js', { method: 'POST' })).status).toBe(405);
  });
});
