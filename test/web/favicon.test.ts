// The pages carry their icon inline, and /favicon.ico serves the same SVG for whatever asks there.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe("the pages' icon", () => {
  it('the dashboard and the API reference link an inline SVG icon that their policy allows', async () => {
    for (const path of ['/', '/dashboard', '/docs']) {
      const res = await t.app.fetch(new Request(`http://test.local${path}`));
      expect(res.status, path).toBe(200);
      const html = await res.text();
      const href = /<link rel="icon" type="image\/svg\+xml" href="(data:image\/svg\+xml,[^"]+)">/.exec(html)?.[1];
      expect(href, path).toBeDefined();
      expect(decodeURIComponent(href!.slice('data:image/svg+xml,'.length))).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*>.*<\/svg>$/);
      expect(res.headers.get('content-security-policy')).toMatch(/img-src [^;]*data:/);
    }
  });

  it('/favicon.ico answers the same SVG, typed image/svg+xml and cacheable, with a 304 on revalidation', async () => {
    const res = await t.app.fetch(new Request('http://test.local/favicon.ico'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/svg+xml');
    expect(res.headers.get('cache-control')).toMatch(/^public, max-age=\d+/);
    const body = await res.text();
    const page = await (await t.app.fetch(new Request('http://test.local/dashboard'))).text();
    const href = /<link rel="icon" type="image\/svg\+xml" href="data:image\/svg\+xml,([^"]+)">/.exec(page)![1];
    expect(body).toBe(decodeURIComponent(href));
    expect(body.length).toBeLessThan(1024);

    const etag = res.headers.get('etag')!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await t.app.fetch(new Request('http://test.local/favicon.ico', { headers: { 'if-none-match': etag } }));
    expect(again.status).toBe(304);
    const head = await t.app.fetch(new Request('http://test.local/favicon.ico', { method: 'HEAD' }));
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect((await t.app.fetch(new Request('http://test.local/favicon.ico', { method: 'POST' }))).status).toBe(405);
  });
});
