// The pages' Content-Security-Policy, checked by a real browser: GraphiQL's and the dashboard's
// own scripts are not blocked while an injected inline script is, and neither page asks another
// host for anything (every such request is refused, as on a machine without internet).
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { cspViolations, launchChromium, OUTPUT, recordCspViolations, refuseForeign } from '../helpers/browser.ts';

describe('CSP in a browser', () => {
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

  /** Requests the page made to any host but this server's (each one refused). */
  const foreign: string[] = [];

  async function open(pathname: string): Promise<{ page: Page; violations: string[] }> {
    const page = await browser.newPage();
    await refuseForeign(page, new URL(url).origin, foreign);
    await recordCspViolations(page);
    await page.goto(url + pathname, { waitUntil: 'load' });
    const violations = await cspViolations(page);
    return { page, violations };
  }

  it('GraphiQL works offline: its editor, schema and a query run from this server alone; an injected script is refused', async () => {
    foreign.length = 0;
    const { page, violations } = await open('/graphql');
    // The editors are up (Monaco, its workers served from here) and the default query is in one.
    await page.locator('.graphiql-query-editor .monaco-editor').waitFor({ timeout: 20_000 });
    await expect.poll(() => page.locator('.graphiql-query-editor').textContent(), { timeout: 20_000 }).toContain('me');
    // Running it reaches this server: without a key, the API's own 401 comes back into the result pane.
    await page.locator('.graphiql-execute-button').click();
    await expect.poll(() => page.locator('.graphiql-response').textContent(), { timeout: 20_000 }).toContain('UNAUTHENTICATED');
    fs.mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: path.join(OUTPUT, 'graphiql-offline.png') });
    expect(foreign).toEqual([]);
    expect(violations).toEqual([]);
    expect(await cspViolations(page)).toEqual([]);
    await page.evaluate(() => {
      const s = document.createElement('script');
      s.textContent = 'window.__injected = true';
      document.body.appendChild(s);
    });
    // The refusal is reported as a violation; once it is, the script has had its chance to run.
    await expect.poll(async () => (await cspViolations(page)).some((v) => v.startsWith('script-src')), { timeout: 10_000 }).toBe(true);
    expect(await page.evaluate(() => (window as unknown as { __injected?: boolean }).__injected)).toBeUndefined();
    await page.close();
  });

  it('dashboard: its bundle loads and runs without violations', async () => {
    expect((await fetch(`${url}/dashboard`)).status).toBe(200);
    foreign.length = 0;
    const { page } = await open('/dashboard');
    await page.waitForFunction(() => !document.querySelector('#app .boot'), undefined, { timeout: 20_000 });
    expect(await page.evaluate(() => document.querySelector('#app')?.textContent ?? '')).not.toBe('Loading…');
    expect(foreign).toEqual([]);
    expect(await cspViolations(page)).toEqual([]);
    await page.close();
  });
});
