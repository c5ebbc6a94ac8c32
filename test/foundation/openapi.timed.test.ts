// The OpenAPI document is built once per app, in a few milliseconds (timed project: a wall-clock
// budget, measured alone). What it serves: openapi.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAPI_PATH } from '../../src/rest/openapi/document.ts';
import { createTestApp, type TestApp } from '../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('the OpenAPI document', () => {
  it('is served within a second on the first request', async () => {
    const started = performance.now();
    const res = await t.app.fetch(new Request(`http://test.local${OPENAPI_PATH}`));
    const firstMs = performance.now() - started;
    expect(res.status).toBe(200);
    await res.text();
    expect(firstMs).toBeLessThan(1000);
  });
});
