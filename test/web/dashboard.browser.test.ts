// The dashboard in real headless Chromium against the real server process (API + worker, 50 ms
// simulated calls): paste a key, create a batch from a CSV file (with per-row feedback), open it,
// start it, and watch the counters reach their final numbers without a page reload. Chromium is a
// requirement of this suite, not an option: without it the test fails (CI installs it).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { createPgDatabase, TEST_DATABASE_URL } from '../helpers/database.ts';
import { formatCsv } from '../../src/web/csv.ts';

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const OUTPUT = path.resolve(import.meta.dirname, '../../test-output');

let server: ServerProcess | undefined;
let browser: Browser | undefined;
let dataDir: string | undefined;
let dropDb: (() => Promise<void>) | undefined;
let apiKey = '';

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: install it (apt-get install -y chromium) or set CHROMIUM_PATH`);
  }
  const env: Record<string, string> = {
    RUN_WORKER: 'true',
    SIM_CALL_MS: '50',
    WORKER_POLL_MS: '50',
    SEED_DEMO: 'true',
    LOG_LEVEL: 'warn',
    APP_SECRET: 'browser-test-secret-0123456789abcdef0123',
  };
  if (TEST_DATABASE_URL) {
    const pgdb = await createPgDatabase(TEST_DATABASE_URL);
    env.DATABASE_URL = pgdb.url;
    dropDb = pgdb.drop;
  } else {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dashboard-test-'));
    env.DATA_DIR = dataDir;
  }
  server = await startServerProcess(env);
  // The demo account's key is printed once at first start.
  const deadline = Date.now() + 20_000;
  while (!/sk_[A-Za-z0-9_-]{20,}/.test(server.stdout()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  apiKey = /sk_[A-Za-z0-9_-]{20,}/.exec(server.stdout())?.[0] ?? '';
  expect(apiKey).not.toBe('');
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (server && server.child.exitCode === null) {
    server.child.kill('SIGTERM');
    await server.waitForExit();
  }
  await dropDb?.();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

async function counter(page: Page, name: string): Promise<number> {
  return Number(await page.getByTestId(`counter-${name}`).textContent());
}

describe('dashboard', () => {
  it('creates a batch from CSV and follows it live to the end without reloading', async () => {
    const page = await browser!.newPage({ viewport: { width: 1366, height: 768 } });
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(String(e)));

    // Key screen, then the (empty) batch list.
    await page.goto(`${server!.url}/dashboard`);
    await page.getByTestId('api-key').fill(apiKey);
    await page.getByTestId('connect').click();
    await expect.poll(() => page.locator('.account').textContent()).toBe('Demo Account');
    await page.getByTestId('new-batch').click();

    // 12 good contacts (last digits give a mix of answered, busy, no answer, failed), one row the
    // API would refuse the whole request for (left out here), one number the API rejects itself.
    const rows = [['contact_id', 'name', 'phone_number', 'plan']];
    for (let i = 0; i < 12; i++) rows.push([`c-${i + 1}`, `Contact ${i + 1}`, `+1415555${String(1000 + i * 7).padStart(4, '0')}`, i % 2 ? 'gold' : 'basic']);
    rows.push(['c-short', 'Too Short', '12345', 'basic']);
    rows.push(['c-bad', 'Not A Number', '+99 1234 5678', 'basic']);
    await page.getByTestId('csv-file').setInputFiles({ name: 'contacts.csv', mimeType: 'text/csv', buffer: Buffer.from(formatCsv(rows)) });
    await expect.poll(() => page.getByTestId('csv-summary').textContent()).toContain('13 contacts ready');
    // Line 14 of the file is the short number.
    const localIssues = await page.getByTestId('csv-issues').textContent();
    expect(localIssues).toContain('14');
    expect(localIssues).toContain('c-short');

    await page.getByTestId('mode-manual').check();
    await expect.poll(() => page.getByTestId('agent').inputValue()).not.toBe('');
    await page.getByTestId('create-submit').click();
    await expect.poll(() => page.getByTestId('create-summary').textContent()).toContain('12 of 13 contacts accepted, 1 rejected');
    const rejected = await page.getByTestId('validation-errors').textContent();
    expect(rejected).toContain('c-bad');
    expect(rejected).toContain('15'); // its CSV line

    await page.getByTestId('open-batch').click();
    await expect.poll(() => counter(page, 'queued')).toBe(12);
    await expect.poll(() => page.getByTestId('live').getAttribute('data-state')).toBe('live');
    expect(await counter(page, 'completed')).toBe(0);
    await expect.poll(() => page.locator('table.calls tbody tr').count()).toBe(12);

    // From here on the page must not reload: a marker on window would vanish.
    await page.evaluate(() => ((window as unknown as { __noReload: boolean }).__noReload = true));
    await page.getByRole('button', { name: 'Start' }).click();

    await expect
      .poll(async () => ({ queued: await counter(page, 'queued'), inProgress: await counter(page, 'inProgress') }), { timeout: 30_000 })
      .toEqual({ queued: 0, inProgress: 0 });
    await expect.poll(() => page.locator('.view[data-status]').getAttribute('data-status'), { timeout: 15_000 }).toBe('completed');
    const completed = await counter(page, 'completed');
    const failed = await counter(page, 'failed');
    expect(completed + failed + (await counter(page, 'cancelled'))).toBe(12);
    expect(completed).toBeGreaterThan(0);
    expect(failed).toBeGreaterThan(0);
    expect(await page.getByTestId('percent').textContent()).toBe('100%');
    expect(await page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);

    // The calls table moved live as well; an answered call shows its summary and transcript.
    await expect.poll(() => page.locator('table.calls tbody tr:has(.s-completed)').count(), { timeout: 15_000 }).toBe(completed);
    await expect
      .poll(() => page.locator('table.calls tbody tr:has(.s-completed) td:nth-child(6)').allTextContents(), { timeout: 15_000 })
      .toEqual(Array(completed).fill('ready'));
    await page.locator('table.calls tbody tr:has(.s-completed)').first().click();
    await expect.poll(() => page.getByTestId('call-summary').textContent()).toBeTruthy();
    expect(await page.locator('.call-detail pre.transcript').count()).toBe(1);

    fs.mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: path.join(OUTPUT, 'dashboard-batch.png') });
    // No error banner along the way.
    expect(await page.getByTestId('banner').textContent(), server!.stdout()).toBe('');

    // The list shows the finished batch too.
    await page.locator('a.back').click();
    await expect.poll(() => page.locator('table.batches tbody tr .s-completed').count()).toBe(1);
    await page.screenshot({ path: path.join(OUTPUT, 'dashboard-batches.png') });
    expect(await page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);
    expect(pageErrors).toEqual([]);
    await page.close();
  });

  it('shows an error instead of a blank page for a wrong key', async () => {
    const page = await browser!.newPage({ viewport: { width: 1366, height: 768 } });
    await page.goto(`${server!.url}/`);
    await page.getByTestId('api-key').fill('sk_' + 'w'.repeat(43));
    await page.getByTestId('connect').click();
    await expect.poll(() => page.getByTestId('key-error').textContent()).toContain('not accepted');
    await page.close();
  });
});
