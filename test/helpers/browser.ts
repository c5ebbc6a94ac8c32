// Debian's Chromium for the browser tests, and what they watch on a page: requests to other hosts
// (refused, as on a machine without internet) and Content-Security-Policy violations.
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

// A requirement: without Chromium a browser suite fails (CI installs it).
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const OUTPUT = path.resolve(import.meta.dirname, '../../test-output');

export function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: apt-get install -y chromium, or set CHROMIUM_PATH`);
  return chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
}

/** Refuses every request of the page to another origin, adding its URL to `foreign`. */
export async function refuseForeign(page: Page, origin: string, foreign: string[]): Promise<void> {
  await page.route('**/*', (route) => {
    const u = route.request().url();
    if (new URL(u).origin === origin || u.startsWith('data:') || u.startsWith('blob:')) return route.continue();
    foreign.push(u);
    return route.abort('internetdisconnected');
  });
}

/** From the next navigation on, the page keeps its CSP violations for cspViolations(). */
export async function recordCspViolations(page: Page): Promise<void> {
  await page.addInitScript(() => {
    (window as unknown as { __csp: string[] }).__csp = [];
    document.addEventListener('securitypolicyviolation', (e) =>
      (window as unknown as { __csp: string[] }).__csp.push(`${e.violatedDirective} ${e.blockedURI}`),
    );
  });
}

export const cspViolations = (page: Page): Promise<string[]> => page.evaluate(() => (window as unknown as { __csp: string[] }).__csp);
