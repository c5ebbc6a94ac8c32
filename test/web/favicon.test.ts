// The pages carry their icon inline, so a browser asks for no /favicon.ico (which would be a 404).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('the pages\' icon', () => {
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
});
