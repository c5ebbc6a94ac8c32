// The pages' Content-Security-Policy, checked by a real browser: GraphiQL's and the dashboard's
// own scripts are not blocked (their CDN is unreachable here, which is a network error, not a
// policy violation), while an injected inline script is.
import fs from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';

// A requirement, as in the dashboard's browser test: without Chromium this suite fails (CI installs it).
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

describe('CSP in a browser', () => {
  let t: TestApp;
  let url: string;
  let browser: Browser;

  beforeAll(async () => {
    t = await createTestApp();
    url = await t.app.listen();
    if (!fs.existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: apt-get install -y chromium, or set CHROMIUM_PATH`);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function open(path: string): Promise<{ page: Page; violations: string[] }> {
    const page = await browser.newPage();
    await page.addInitScript(() => {
      (window as unknown as { __csp: string[] }).__csp = [];
      document.addEventListener('securitypolicyviolation', (e) =>
        (window as unknown as { __csp: string[] }).__csp.push(`${e.violatedDirective} ${e.blockedURI}`),
      );
    });
    await page.goto(url + path, { waitUntil: 'load' });
    await page.waitForTimeout(300);
    const violations = await page.evaluate(() => (window as unknown as { __csp: string[] }).__csp);
    return { page, violations };
  }

  it('GraphiQL: its inline scripts run under the policy; an injected one is refused', async () => {
    const { page, violations } = await open('/graphql');
    expect(violations).toEqual([]);
    // The first inline script defines this; under a policy without its hash it would be missing.
    expect(await page.evaluate(() => typeof (window as unknown as { prepareBlob?: unknown }).prepareBlob)).toBe('function');
    await page.evaluate(() => {
      const s = document.createElement('script');
      s.textContent = 'window.__injected = true';
      document.body.appendChild(s);
    });
    await page.waitForTimeout(100);
    expect(await page.evaluate(() => (window as unknown as { __injected?: boolean }).__injected)).toBeUndefined();
    expect((await page.evaluate(() => (window as unknown as { __csp: string[] }).__csp)).some((v) => v.startsWith('script-src'))).toBe(true);
    await page.close();
  });

  it('dashboard: its bundle loads and runs without violations', async () => {
    const res = await fetch(`${url}/dashboard`);
    // The dashboard is built by another module; only check the policy when it is served.
    if (res.status !== 200) return;
    const { page, violations } = await open('/dashboard');
    expect(violations).toEqual([]);
    await page.waitForFunction(() => !document.querySelector('#app .boot'), undefined, { timeout: 10_000 }).catch(() => {});
    expect(await page.evaluate(() => document.querySelector('#app')?.textContent ?? '')).not.toBe('Loading…');
    await page.close();
  });
});
