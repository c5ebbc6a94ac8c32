// The REST reference at /docs in Debian's Chromium, offline: every request to another host is
// refused and counted. The page renders the operations of the OpenAPI document from this server
// alone, without a single Content-Security-Policy violation; a screenshot goes to test-output/.
import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { cspViolations, launchChromium, OUTPUT, recordCspViolations, refuseForeign } from '../helpers/browser.ts';

describe('the REST reference in a browser', () => {
  let t: TestApp;
  let url: string;
  let browser: Browser;

  beforeAll(async () => {
    t = await createTestApp();
    url = await t.app.listen();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('renders every operation offline, with no foreign request and no CSP violation', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const foreign: string[] = [];
    await refuseForeign(page, new URL(url).origin, foreign);
    await recordCspViolations(page);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${url}/docs`, { waitUntil: 'load' });

    // Redoc renders one section per operation, titled by its summary.
    const doc = (await (await fetch(`${url}/api/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, { summary: string }>> };
    const summaries = Object.values(doc.paths).flatMap((methods) => Object.values(methods).map((op) => op.summary));
    await page.locator('[data-section-id^="tag/"]').first().waitFor({ timeout: 30_000 });
    const text = () => page.locator('#redoc').innerText();
    for (const summary of summaries) await expect.poll(text, { timeout: 30_000 }).toContain(summary);
    expect(await page.locator('[data-section-id^="operation/"]').count()).toBe(summaries.length);
    // The contract's details are there: a path, the bearer scheme, an error form.
    await expect.poll(text).toContain('/api/v1/public/call-batches/{batch_id}/results');
    expect(await text()).toMatch(/Authorizations:\s*apiKey/i);

    fs.mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: path.join(OUTPUT, 'api-docs.png') });
    expect(foreign).toEqual([]);
    expect(await cspViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('renders again when the browser revalidates the page (a 304 whose headers join the cached page)', async () => {
    // No routing here: Playwright's routing turns Chromium's HTTP cache off.
    const context = await browser.newContext();
    const page = await context.newPage();
    await recordCspViolations(page);
    const revalidations: string[] = [];
    page.on('request', async (r) => {
      const inm = new URL(r.url()).pathname === '/docs' && (await r.allHeaders())['if-none-match'];
      if (inm) revalidations.push(inm);
    });
    await page.goto(`${url}/docs`, { waitUntil: 'load' });
    await page.locator('[data-section-id^="operation/"]').first().waitFor({ timeout: 30_000 });
    await page.reload({ waitUntil: 'load' });
    // The reload revalidated the cached page (answered 304). The listener reads the headers
    // asynchronously, so on a busy machine it may record the request after the load event.
    await expect.poll(() => revalidations.length).toBe(1);
    expect(await cspViolations(page)).toEqual([]);
    await page.locator('[data-section-id^="operation/"]').first().waitFor({ timeout: 30_000 });
    await context.close();
  }, 90_000);
});
