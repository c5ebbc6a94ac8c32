// The dashboard in real headless Chromium against the real server process (API + worker, 50 ms
// simulated calls): paste a key, create an IMMEDIATE batch from a CSV file (with per-row feedback),
// open it and watch the counters reach their final numbers without a page reload; filter its calls,
// read a call and play its recording; start, pause, resume and cancel a batch; a call waiting for a
// retry says when and why, and lists its attempts; the do-not-call list takes, finds and drops
// numbers and pages by cursor; the numbers page shows each caller-ID number's health; errors and laptop screens never leave a blank page. Chromium is a requirement of this suite, not an option: without
// it the test fails (CI installs it). Screenshots go to test-output/.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { createPgDatabase, TEST_DATABASE_URL } from '../helpers/database.ts';
import { formatCsv, parseCsv } from '../../src/csv/csv.ts';
import { tempDataDir } from '../helpers/data-dir.ts';
import { waitFor } from '../helpers/wait.ts';

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const OUTPUT = path.resolve(import.meta.dirname, '../../test-output');
const LAPTOP = { width: 1366, height: 768 };

let server: ServerProcess | undefined;
let browser: Browser | undefined;
let dataDir: string | undefined;
let dropDb: (() => Promise<void>) | undefined;
let apiKey = '';
const METRICS_TOKEN = 'browser-test-metrics-token-0123';

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: install it (apt-get install -y chromium) or set CHROMIUM_PATH`);
  }
  const env: Record<string, string> = {
    RUN_WORKER: 'true',
    SIM_CALL_MS: '50',
    WORKER_POLL_MS: '50',
    // delay_seconds 1: a retry comes due while the test watches.
    RETRY_MIN_DELAY_SECONDS: '1',
    SEED_DEMO: 'true',
    LOG_LEVEL: 'warn',
    APP_SECRET: 'browser-test-secret-0123456789abcdef0123',
    // /metrics tells how many worker ticks went by (a pause is checked over ticks, not over wall time).
    METRICS_TOKEN,
  };
  if (TEST_DATABASE_URL) {
    const pgdb = await createPgDatabase(TEST_DATABASE_URL);
    env.DATABASE_URL = pgdb.url;
    dropDb = pgdb.drop;
  } else {
    dataDir = tempDataDir('dashboard-test-');
    env.DATA_DIR = dataDir;
  }
  server = await startServerProcess(env);
  // The demo account's key is printed once at first start.
  await waitFor(() => /sk_[A-Za-z0-9_-]{20,}/.test(server!.stdout()), { timeoutMs: 20_000, intervalMs: 50, what: 'the demo key in the banner' });
  apiKey = /sk_[A-Za-z0-9_-]{20,}/.exec(server.stdout())?.[0] ?? '';
  expect(apiKey).not.toBe('');
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  fs.mkdirSync(OUTPUT, { recursive: true });
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

const COUNTERS = ['queued', 'inProgress', 'completed', 'failed', 'cancelled'] as const;
type Counts = Record<(typeof COUNTERS)[number], number>;

async function counter(page: Page, name: string): Promise<number> {
  return Number(await page.getByTestId(`counter-${name}`).textContent());
}

async function counts(page: Page): Promise<Counts> {
  const out = {} as Counts;
  for (const c of COUNTERS) out[c] = await counter(page, c);
  return out;
}

/** A page that fails the test on any uncaught script error. */
async function openPage(viewport = LAPTOP): Promise<{ page: Page; pageErrors: string[] }> {
  const page = await browser!.newPage({ viewport });
  const pageErrors: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  return { page, pageErrors };
}

async function connect(page: Page, hash = '') {
  await page.goto(`${server!.url}/dashboard${hash}`);
  await page.getByTestId('api-key').fill(apiKey);
  await page.getByTestId('connect').click();
  await expect.poll(() => page.locator('.account').textContent()).toBe('Demo Account');
}

/** From here on the page must not reload: a marker on window would vanish. */
const markNoReload = (page: Page) => page.evaluate(() => ((window as unknown as { __noReload: boolean }).__noReload = true));
const stillNoReload = (page: Page) => page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload === true);

/** A counter of the server's /metrics (its worker runs in the same process). */
async function metric(name: string): Promise<number> {
  const res = await fetch(`${server!.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1] ?? NaN);
}

async function api(method: string, p: string, body?: unknown): Promise<any> {
  const res = await fetch(`${server!.url}${p}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

type RestContact = { contact_id: string; phone_number: string; metadata?: Record<string, unknown> };

async function createBatchOverRest(contacts: RestContact[], extra: Record<string, unknown>): Promise<string> {
  const gql = await api('POST', '/graphql', { query: '{ agents { id promptVersions { id } } }' });
  const agent = gql.body.data.agents[0];
  const res = await api('POST', '/api/v1/public/call-batches', {
    agent_id: agent.id,
    version_id: agent.promptVersions[0].id,
    interruption: true,
    use_alternate_number: false,
    schedule_date: '2030-01-15',
    schedule_time: '09:30',
    schedule_timezone: 'UTC',
    contacts,
    ...extra,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.batch_id;
}

/** +1 415 555 1xxx numbers; the simulator decides by the last digit (0-2 fail, 3-9 answered). */
const phone = (i: number) => `+1415555${String(1000 + i * 7).padStart(4, '0')}`;
const outcomeOf = (p: string) => (({ '0': 'no_answer', '1': 'busy', '2': 'failed' }) as Record<string, string>)[p.at(-1)!] ?? 'completed';

describe('dashboard', () => {
  it('creates an immediate batch from CSV and follows it live to its final numbers without reloading', async () => {
    const { page, pageErrors } = await openPage();
    await connect(page);
    await markNoReload(page);
    await page.getByTestId('new-batch').click();

    // 40 good contacts, one row the API would refuse the whole request for (left out here), one
    // number the API rejects itself. Concurrency 1: the batch takes a few seconds, seen moving.
    const N = 40;
    const rows = [['contact_id', 'name', 'phone_number', 'plan']];
    for (let i = 0; i < N; i++) rows.push([`c-${i + 1}`, `Contact ${i + 1}`, phone(i), i % 2 ? 'gold' : 'basic']);
    rows.push(['c-short', 'Too Short', '12345', 'basic']);
    rows.push(['c-bad', 'Not A Number', '+99 1234 5678', 'basic']);
    await page.getByTestId('csv-file').setInputFiles({ name: 'contacts.csv', mimeType: 'text/csv', buffer: Buffer.from(formatCsv(rows)) });
    await expect.poll(() => page.getByTestId('csv-summary').textContent()).toContain(`${N + 1} contacts ready`);
    // Line N + 2 of the file is the short number.
    const localIssues = await page.getByTestId('csv-issues').textContent();
    expect(localIssues).toContain(String(N + 2));
    expect(localIssues).toContain('c-short');

    await page.getByTestId('mode-immediate').check();
    await page.getByLabel('Concurrency').fill('1');
    await page.getByLabel('Label').fill('  Browser batch ');
    await expect.poll(() => page.getByTestId('agent').inputValue()).not.toBe('');
    await page.getByTestId('create-submit').click();
    await expect.poll(() => page.getByTestId('create-summary').textContent()).toContain(`${N} of ${N + 1} contacts accepted, 1 rejected`);
    const rejected = await page.getByTestId('validation-errors').textContent();
    expect(rejected).toContain('c-bad');
    expect(rejected).toContain(String(N + 3)); // its CSV line
    const href = (await page.getByTestId('open-batch').getAttribute('href'))!;
    const batchId = decodeURIComponent(href.replace('#/batch/', ''));

    // The batch is already running: open it and record every value the counters show.
    await page.getByTestId('open-batch').click();
    await page.getByTestId('counter-completed').waitFor();
    expect(await page.getByTestId('batch-label').textContent()).toBe('Browser batch');
    await page.evaluate(() => {
      const w = window as unknown as { __seen: number[] };
      w.__seen = [];
      const read = () => {
        const n = (k: string) => Number(document.querySelector(`[data-testid="counter-${k}"]`)?.textContent);
        w.__seen.push(n('completed') + n('failed') + n('cancelled'));
      };
      read();
      new MutationObserver(read).observe(document.querySelector('.counters')!, { subtree: true, childList: true, characterData: true });
    });
    await expect.poll(() => page.getByTestId('live').getAttribute('data-state')).toBe('live');

    const expected = { completed: 0, failed: 0 };
    for (let i = 0; i < N; i++) expected[outcomeOf(phone(i)) === 'completed' ? 'completed' : 'failed'] += 1;
    await expect.poll(() => counts(page), { timeout: 60_000 }).toEqual({ queued: 0, inProgress: 0, cancelled: 0, ...expected });
    await expect.poll(() => page.locator('.view[data-status]').getAttribute('data-status'), { timeout: 15_000 }).toBe('completed');
    expect(await page.getByTestId('percent').textContent()).toBe('100%');
    // The numbers moved on the page, through values between the start and the end.
    const seen = await page.evaluate(() => (window as unknown as { __seen: number[] }).__seen);
    expect(seen.some((d) => d > 0 && d < N)).toBe(true);
    expect(seen.at(-1)).toBe(N);
    // They are the batch's own numbers.
    const details = await api('GET', `/api/v1/public/call-batches/${batchId}`);
    expect({ completed: details.body.data.completed, failed: details.body.data.failed }).toEqual(expected);
    expect(await stillNoReload(page)).toBe(true);

    // Export CSV downloads the batch's results (fetched with the key in a header, saved from a Blob):
    // one row per call, the call record's columns, the API's values.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-csv').click()]);
    expect(download.suggestedFilename()).toBe(`${batchId}-results.csv`);
    const [header, ...csvRows] = parseCsv(fs.readFileSync((await download.path())!, 'utf8'));
    expect(header.cells.slice(0, 3)).toEqual(['call_id', 'batch_id', 'contact_id']);
    const results = await api('GET', `/api/v1/public/call-batches/${batchId}/results`);
    const column = (name: string) => csvRows.map((r) => r.cells[header.cells.indexOf(name)]);
    expect(column('call_id')).toEqual(results.body.data.items.map((c: { call_id: string }) => c.call_id));
    expect(column('status')).toEqual(results.body.data.items.map((c: { status: string }) => c.status));
    expect(column('summary')).toEqual(results.body.data.items.map((c: { summary: string | null }) => c.summary ?? ''));
    expect(csvRows).toHaveLength(N);
    expect(await stillNoReload(page)).toBe(true);

    // The calls table moved live as well: answered calls show their analysis as ready.
    const completedRows = page.locator('table.calls tbody tr:has(.s-completed)');
    await expect.poll(() => completedRows.count(), { timeout: 15_000 }).toBe(expected.completed);
    await expect
      .poll(() => page.locator('table.calls tbody tr:has(.s-completed) td:nth-child(6)').allTextContents(), { timeout: 15_000 })
      .toEqual(Array(expected.completed).fill('ready'));

    // The outcomes panel counts the answered calls' outcome values (it re-reads at most every 10 s);
    // the pace is shown only while the batch runs.
    const interested = page.locator('[data-testid="outcomes"] [data-outcome-key="interested"] .outcome-count');
    await expect
      .poll(async () => (await interested.allTextContents()).reduce((n, c) => n + Number(c), 0), { timeout: 45_000 })
      .toBe(expected.completed);
    expect(await page.getByTestId('pace').textContent()).toBe('');

    // The status filter shows only the calls in that status.
    const noAnswer = Array.from({ length: N }, (_, i) => outcomeOf(phone(i))).filter((o) => o === 'no_answer').length;
    await page.getByTestId('call-filter').selectOption('no_answer');
    await expect.poll(() => page.locator('table.calls tbody tr[data-call-id]').count()).toBe(noAnswer);
    expect(await page.locator('table.calls tbody tr[data-call-id]:not(:has(.s-no_answer))').count()).toBe(0);
    await page.getByTestId('call-filter').selectOption('completed');
    await expect.poll(() => page.locator('table.calls tbody tr[data-call-id]').count()).toBe(expected.completed);
    expect(await page.locator('table.calls tbody tr[data-call-id]:not(:has(.s-completed))').count()).toBe(0);

    // A finished call: summary, outcomes, transcript, and a recording that plays (audio/wav).
    await completedRows.first().click();
    await expect.poll(() => page.getByTestId('call-summary').textContent()).toBeTruthy();
    const outcomes = await page.locator('.call-detail dl.outcomes dt').allTextContents();
    expect(outcomes.sort()).toEqual(['callback_requested', 'interested', 'sentiment']);
    expect(await page.locator('.call-detail pre.transcript').count()).toBe(1);
    const src = await page.getByTestId('recording').getAttribute('src');
    expect(src).toMatch(/^\/recordings\/call_[0-9a-f]{32}\.wav\?expires=\d+&signature=/);
    const audio = await page.evaluate(async (s) => {
      const r = await fetch(s!);
      const bytes = new Uint8Array(await r.arrayBuffer());
      return { status: r.status, type: r.headers.get('content-type'), riff: String.fromCharCode(...bytes.slice(0, 4)) };
    }, src);
    expect(audio).toEqual({ status: 200, type: 'audio/wav', riff: 'RIFF' });
    await page.screenshot({ path: path.join(OUTPUT, 'dashboard-batch.png') });
    // No error banner along the way.
    expect(await page.getByTestId('banner').textContent(), server!.stdout()).toBe('');

    // The list shows the finished batch too.
    await page.locator('a.back').click();
    await expect.poll(() => page.locator(`table.batches tbody tr[data-batch-id="${batchId}"] .s-completed`).count()).toBe(1);
    await page.screenshot({ path: path.join(OUTPUT, 'dashboard-batches.png') });
    expect(await stillNoReload(page)).toBe(true);
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 120_000);

  it('starts, pauses, resumes and cancels a batch from its page', async () => {
    const N = 60;
    const contacts = Array.from({ length: N }, (_, i) => ({ contact_id: `op-${i}`, phone_number: phone(i) }));
    const id = await createBatchOverRest(contacts, { start_mode: 'manual', concurrency: 1 });
    const { page, pageErrors } = await openPage();
    await connect(page, `#/batch/${id}`);
    await markNoReload(page);
    const status = () => page.locator('.view[data-status]').getAttribute('data-status');
    const button = (name: string) => page.locator('.view > .toolbar .ops').getByRole('button', { name });
    await expect.poll(status).toBe('paused');
    await expect.poll(() => counter(page, 'queued')).toBe(N);

    await button('Start').click();
    await expect.poll(status).toBe('running');
    await expect.poll(async () => (await counter(page, 'completed')) + (await counter(page, 'failed')), { timeout: 15_000 }).toBeGreaterThan(0);

    await button('Pause').click();
    await expect.poll(status).toBe('paused');
    // What was in flight finishes (a claim already under way when the pause committed may still
    // place its call), and the page comes to show what the server has.
    const serverCounts = async () => (await api('GET', `/api/v1/public/call-batches/${id}`)).body.data;
    await expect
      .poll(
        async () => {
          const [server, shown] = [await serverCounts(), await counts(page)];
          return server.in_progress === 0 && shown.inProgress === 0 && shown.queued === server.queued;
        },
        { timeout: 15_000 },
      )
      .toBe(true);
    const paused = await counts(page);
    expect(paused.queued).toBeGreaterThan(0);
    // Then nothing is dialled while paused: five whole worker ticks (each a claim round) later, the same.
    const [ticks, placed] = [await metric('callbatch_worker_ticks_total'), await metric('callbatch_calls_placed_total')];
    await expect.poll(() => metric('callbatch_worker_ticks_total'), { timeout: 15_000 }).toBeGreaterThanOrEqual(ticks + 6);
    expect(await metric('callbatch_calls_placed_total')).toBe(placed);
    expect(await serverCounts()).toMatchObject({ queued: paused.queued, in_progress: 0 });
    expect(await counts(page)).toMatchObject({ queued: paused.queued, inProgress: 0 });

    await button('Resume').click();
    await expect.poll(status).toBe('running');
    await expect.poll(() => counter(page, 'queued'), { timeout: 15_000 }).toBeLessThan(paused.queued);

    page.once('dialog', (d) => void d.accept());
    await button('Cancel').click();
    await expect.poll(status).toBe('cancelled');
    // The server first (a call in flight when the cancel committed is hung up by its worker), then
    // the page; a failure says which of the two is behind, and what the server logged.
    const drained = async () => {
      const c = await serverCounts();
      return c.queued === 0 && c.in_progress === 0;
    };
    await expect
      .poll(drained, { timeout: 30_000 })
      .toBe(true)
      .catch(async (e: unknown) => {
        throw new Error(`the cancelled batch did not drain: ${JSON.stringify(await serverCounts())}\n${server!.stdout().slice(-4_000)}`, {
          cause: e,
        });
      });
    await expect.poll(() => counts(page), { timeout: 15_000 }).toMatchObject({ queued: 0, inProgress: 0 });
    const final = await counts(page);
    expect(final.cancelled).toBeGreaterThan(0);
    expect(final.completed + final.failed + final.cancelled).toBe(N);
    expect(await button('Resume').count()).toBe(0);
    expect(await stillNoReload(page)).toBe(true);
    expect(await page.getByTestId('banner').textContent()).toBe('');
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 90_000);

  it('shows an error instead of a blank page for a wrong key', async () => {
    const { page } = await openPage();
    await page.goto(`${server!.url}/`);
    await page.getByTestId('api-key').fill('sk_' + 'w'.repeat(43));
    await page.getByTestId('connect').click();
    await expect.poll(() => page.getByTestId('key-error').textContent()).toContain('not accepted');
    await page.close();
  });

  it('never leaves a blank page when the API fails or a batch does not exist', async () => {
    const { page, pageErrors } = await openPage();
    await connect(page);
    await expect.poll(() => page.locator('table.batches tbody tr[data-batch-id]').count()).toBeGreaterThan(0);

    // A batch that is not there: a page that says so, with a way back.
    await page.evaluate(() => (location.hash = '#/batch/sched_00000000000000000000000000000000'));
    await expect.poll(() => page.getByTestId('not-found').textContent()).toContain('Batch not found');
    await page.getByTestId('not-found').getByRole('link').click();
    await expect.poll(() => page.locator('table.batches tbody tr[data-batch-id]').count()).toBeGreaterThan(0);

    // The server failing (an HTML 502 from a proxy): the message shows, the page offers a retry.
    await page.route('**/graphql', (route) => route.fulfill({ status: 502, contentType: 'text/html', body: '<h1>Bad Gateway</h1>' }));
    await page.evaluate(() => (location.hash = '#/batches?status=completed'));
    await expect.poll(() => page.getByTestId('load-error').textContent()).toContain('could not be loaded');
    expect(await page.getByTestId('banner').textContent()).toContain('502');
    // The server unreachable: same.
    await page.unroute('**/graphql');
    await page.route('**/graphql', (route) => route.abort('connectionrefused'));
    await page.getByTestId('load-error').getByRole('button', { name: 'Try again' }).click();
    await expect.poll(() => page.getByTestId('banner').textContent()).toContain('Cannot reach the server');
    expect(await page.getByTestId('load-error').count()).toBe(1);
    // Back up: the retry loads the page.
    await page.unroute('**/graphql');
    await page.getByTestId('load-error').getByRole('button', { name: 'Try again' }).click();
    await expect.poll(() => page.locator('table.batches tbody tr[data-batch-id]').count()).toBeGreaterThan(0);
    expect(await page.getByTestId('load-error').count()).toBe(0);
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 60_000);

  it('fits laptop screens: no sideways scrolling, the selected call beside the calls', async () => {
    const id = await createBatchOverRest(
      Array.from({ length: 8 }, (_, i) => ({ contact_id: `lap-${i}`, phone_number: phone(i + 3) })),
      { start_mode: 'immediate' },
    );
    for (const viewport of [
      { width: 1280, height: 720 },
      { width: 1024, height: 768 },
    ]) {
      const { page, pageErrors } = await openPage(viewport);
      await connect(page);
      await expect.poll(() => page.locator('table.batches tbody tr[data-batch-id]').count()).toBeGreaterThan(0);
      const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(await overflow()).toBe(0);
      await page.evaluate((b) => (location.hash = `#/batch/${b}`), id);
      await expect.poll(() => page.locator('.view[data-status]').getAttribute('data-status'), { timeout: 30_000 }).toBe('completed');
      await expect
        .poll(() => page.locator('table.calls tbody tr:has(.s-completed) td:nth-child(6)').allTextContents(), { timeout: 15_000 })
        .toContain('ready');
      await page.locator('table.calls tbody tr:has(.s-completed)').first().click();
      await expect.poll(() => page.getByTestId('call-summary').textContent()).toBeTruthy();
      expect(await overflow()).toBe(0);
      // Side by side and both on screen: the details start where the calls start, to their right.
      const table = (await page.locator('.calls-pane').boundingBox())!;
      const detail = (await page.getByTestId('call-detail').boundingBox())!;
      expect(detail.x).toBeGreaterThanOrEqual(table.x + table.width);
      expect(detail.x + detail.width).toBeLessThanOrEqual(viewport.width);
      expect(detail.y).toBeLessThan(viewport.height);
      if (viewport.width === 1024) await page.screenshot({ path: path.join(OUTPUT, 'dashboard-laptop-1024.png') });
      expect(pageErrors).toEqual([]);
      await page.close();
    }
  }, 90_000);

  it('says when and why a call waits for a retry, and lists its attempts once the retry came due', async () => {
    const overflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    const row = (page: Page, contact: string) => page.locator(`table.calls tbody tr[data-call-id]:has-text("${contact}")`);
    const attemptRows = (page: Page) =>
      page
        .locator('[data-testid="call-attempts"] tbody tr')
        .evaluateAll((trs) => trs.map((tr) => [...tr.children].slice(0, 3).map((td) => (td as HTMLElement).innerText.replace(/\s+/g, ' ').trim())));

    // An hour between attempts: the calls that were not answered stay waiting while the page is read.
    const expires = new Date(Date.now() + 2 * 86_400_000).toISOString();
    const waiting = await createBatchOverRest(
      [
        { contact_id: 'w-busy', phone_number: phone(200), metadata: { sim: 'busy,completed' } },
        { contact_id: 'w-voicemail', phone_number: phone(201), metadata: { sim: 'voicemail,completed' } },
        { contact_id: 'w-answered', phone_number: phone(202), metadata: { sim: 'completed' } },
      ],
      { start_mode: 'immediate', retry: { max_attempts: 3, on: ['no_answer', 'busy', 'voicemail'], delay_seconds: 3600 }, expires_at: expires },
    );
    const { page, pageErrors } = await openPage();
    await connect(page, `#/batch/${waiting}`);
    await expect.poll(() => page.getByTestId('batch-retry').textContent()).toBe('up to 3 attempts, 1 h apart, after no answer, busy, voicemail');
    expect(await page.getByTestId('batch-expires').textContent()).toMatch(/\d/);
    const waitText = (contact: string) => row(page, contact).getByTestId('retry-wait').textContent();
    await expect.poll(() => waitText('w-busy'), { timeout: 30_000 }).toMatch(/^retry at \S.* \(attempt 2 of 3, last: busy\)$/);
    await expect.poll(() => waitText('w-voicemail'), { timeout: 30_000 }).toMatch(/\(attempt 2 of 3, last: voicemail\)$/);
    await expect.poll(() => row(page, 'w-answered').locator('.s-completed').count(), { timeout: 30_000 }).toBe(1);
    expect(await row(page, 'w-answered').getByTestId('retry-wait').count()).toBe(0);
    // The time shown is the call's next_attempt_at.
    const calls = (await api('GET', `/api/v1/public/call-batches/${waiting}/calls`)).body.data.items;
    const busy = calls.find((c: { contact_id: string }) => c.contact_id === 'w-busy');
    expect([busy.status, busy.attempts]).toEqual(['queued', 1]);
    expect(await row(page, 'w-busy').getByTestId('retry-wait').getAttribute('title')).toBe(
      `Next attempt ${await page.evaluate((iso) => new Date(iso).toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' }), busy.next_attempt_at)}`,
    );
    // Its details: the one attempt so far, and when the next one is.
    await row(page, 'w-busy').click();
    await expect.poll(() => attemptRows(page)).toEqual([['1', phone(200), 'busy']]);
    expect(await page.locator('.call-detail dl.facts:not(.outcomes)').textContent()).toContain('1 of 3');
    expect(await page.locator('.call-detail dl.facts:not(.outcomes)').textContent()).toContain('last: busy');
    expect(await overflow(page)).toBe(0);
    await page.screenshot({ path: path.join(OUTPUT, 'dashboard-retry-waiting.png') });
    // Cancelled, the waiting calls stop waiting, live.
    expect((await api('POST', `/api/v1/public/call-batches/${waiting}/cancel`)).status).toBe(200);
    await expect.poll(() => page.getByTestId('retry-wait').count(), { timeout: 30_000 }).toBe(0);
    expect(await row(page, 'w-busy').locator('.s-cancelled').count()).toBe(1);

    // A second apart: the page follows the call through its retry to its answer without a reload.
    const due = await createBatchOverRest([{ contact_id: 'd-busy', phone_number: phone(203), metadata: { sim: 'busy,completed' } }], {
      start_mode: 'manual',
      retry: { max_attempts: 3, on: ['busy'], delay_seconds: 1 },
    });
    await page.evaluate((b) => (location.hash = `#/batch/${b}`), due);
    await markNoReload(page);
    await row(page, 'd-busy').click();
    await expect.poll(() => page.getByTestId('call-attempts').textContent()).toBe('Not dialled yet.');
    await expect.poll(() => page.getByTestId('live').getAttribute('data-state')).toBe('live');
    await page.locator('.view > .toolbar .ops').getByRole('button', { name: 'Start' }).click();
    await expect.poll(() => row(page, 'd-busy').locator('.s-completed').count(), { timeout: 30_000 }).toBe(1);
    await expect
      .poll(() => attemptRows(page), { timeout: 15_000 })
      .toEqual([
        ['1', phone(203), 'busy'],
        ['2', phone(203), 'completed agent hangup'],
      ]);
    expect(await page.locator('.call-detail dl.facts:not(.outcomes)').textContent()).toContain('2 of 3');
    expect(await row(page, 'd-busy').getByTestId('retry-wait').count()).toBe(0);
    // The second dial came after the delay.
    const history = await api('POST', '/graphql', {
      query: `query($id: ID!) { call(id: $id) { attempts { startedAt endedAt } } }`,
      variables: { id: await row(page, 'd-busy').getAttribute('data-call-id') },
    });
    const [first, second] = history.body.data.call.attempts;
    expect(Date.parse(second.startedAt) - Date.parse(first.endedAt)).toBeGreaterThanOrEqual(1_000);
    await page.screenshot({ path: path.join(OUTPUT, 'dashboard-retry-done.png') });
    expect(await stillNoReload(page)).toBe(true);
    expect(await page.getByTestId('banner').textContent(), server!.stdout()).toBe('');
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 120_000);

  it("says when a call waits for its calling window, in the contact's own time", async () => {
    // Open only on a day that is not today in UTC: the call waits until then, 09:00 UTC.
    const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
    const tomorrow = DAYS[(new Date().getUTCDay() + 6 + 1) % 7];
    const id = await createBatchOverRest([{ contact_id: 'win-1', phone_number: phone(210) }], {
      start_mode: 'immediate',
      calling_window: { start: '09:00', end: '10:00', days: [tomorrow], timezone: 'UTC' },
    });
    const { page, pageErrors } = await openPage();
    await connect(page, `#/batch/${id}`);
    await expect.poll(() => page.getByTestId('batch-window').textContent()).toBe(`09:00-10:00, ${tomorrow}, UTC`);
    const note = page.locator('table.calls tbody tr[data-call-id]:has-text("win-1")').getByTestId('window-wait');
    await expect.poll(() => note.textContent()).toMatch(/^calling window opens \S.* \(09:00( AM)? UTC\)$/);
    const [call] = (await api('GET', `/api/v1/public/call-batches/${id}/calls`)).body.data.items;
    expect([call.status, call.timezone, new Date(call.next_attempt_at).getUTCHours()]).toEqual(['pending', 'UTC', 9]);
    await page.screenshot({ path: path.join(OUTPUT, 'dashboard-window-waiting.png') });
    expect((await api('POST', `/api/v1/public/call-batches/${id}/cancel`)).status).toBe(200);
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 90_000);

  it('adds numbers to the do-not-call list, finds one and removes it', async () => {
    const { page, pageErrors } = await openPage();
    await connect(page);
    await page.getByTestId('nav-do-not-call').click();
    const summary = () => page.getByTestId('dnc-summary').textContent();
    await expect.poll(summary).toMatch(/^\d+ numbers?$/);
    const before = Number((await summary())!.split(' ')[0]);
    const result = () => page.getByTestId('dnc-add-result').textContent();

    // Blank lines are skipped, a number repeated in another form is one entry.
    await page.getByTestId('dnc-numbers').fill('+1 415 555 0188\n\n+14155550189\n1 (415) 555-0188 \n');
    await page.getByTestId('dnc-reason').fill('asked not to be called');
    await page.getByTestId('dnc-add').click();
    await expect.poll(result).toBe('2 added, 0 already listed.');
    await expect.poll(summary).toBe(`${before + 2} numbers`);
    expect(await page.getByTestId('dnc-numbers').inputValue()).toBe('');
    // Newest first, with the reason and where it came from.
    const first = page.locator('table.suppressions tbody tr').first();
    expect(await first.getAttribute('data-phone-number')).toMatch(/^\+1415555018[89]$/);
    expect(await first.textContent()).toContain('asked not to be called');

    await page.getByTestId('dnc-numbers').fill('+14155550189\n+14155550190');
    await page.getByTestId('dnc-reason').fill('');
    await page.getByTestId('dnc-add').click();
    await expect.poll(result).toBe('1 added, 1 already listed.');
    await expect.poll(summary).toBe(`${before + 3} numbers`);
    await page.screenshot({ path: path.join(OUTPUT, 'dashboard-do-not-call.png') });

    // A line that is not a number: nothing is added, the line is named.
    await page.getByTestId('dnc-numbers').fill('+14155550191\nnot a number');
    await page.getByTestId('dnc-add').click();
    await expect.poll(() => page.getByTestId('dnc-add-errors').textContent()).toBe('Line 2 (not a number): Invalid phone number');
    expect((await api('GET', '/api/v1/public/suppressions?phone_number=%2B14155550191')).body.data.items).toEqual([]);

    // Found in any form; removed after a confirm.
    await page.getByTestId('dnc-search').fill('+1 (415) 555-0189');
    await page.getByTestId('dnc-search').press('Enter');
    await expect
      .poll(() =>
        page.locator('table.suppressions tbody tr[data-phone-number]').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-phone-number'))),
      )
      .toEqual(['+14155550189']);
    expect(await page.evaluate(() => location.hash)).toContain('number=');
    let asked = '';
    page.once('dialog', (d) => {
      asked = d.message();
      void d.accept();
    });
    await page.locator('tr[data-phone-number="+14155550189"]').getByRole('button', { name: 'Remove' }).click();
    await expect.poll(() => page.locator('table.suppressions tbody').textContent()).toBe('+1 (415) 555-0189 is not on the list.');
    expect(asked).toContain('+14155550189');
    expect(await page.getByTestId('banner').textContent()).toContain('+14155550189 removed');
    expect((await api('GET', '/api/v1/public/suppressions?phone_number=%2B14155550189')).body.data.items).toEqual([]);
    expect((await api('GET', '/api/v1/public/suppressions?phone_number=%2B14155550188')).body.data.items).toHaveLength(1);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);

    // The server failing: the list says so in place, with a way to try again.
    await page.route('**/graphql', (route) => route.fulfill({ status: 502, contentType: 'text/html', body: '<h1>Bad Gateway</h1>' }));
    await page.getByRole('link', { name: 'Show all' }).click();
    await expect.poll(() => page.getByTestId('load-error').textContent()).toContain('could not be loaded');
    expect(await page.getByTestId('banner').textContent()).toContain('502');
    await page.unroute('**/graphql');
    await page.getByTestId('load-error').getByRole('button', { name: 'Try again' }).click();
    await expect.poll(summary).toBe(`${before + 2} numbers`);
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 60_000);

  it('pages the do-not-call list by cursor: older to the end, newer back through the pages read, first page', async () => {
    const added = (
      await api('POST', '/api/v1/public/suppressions', { phone_numbers: Array.from({ length: 140 }, (_, i) => `+1415666${String(1000 + i)}`) })
    ).body;
    expect(added.data.added).toBe(140);
    const total: number = (await api('GET', '/api/v1/public/suppressions?limit=1')).body.data.pagination.total;
    const pages = Math.ceil(total / 50);
    expect(pages).toBeGreaterThanOrEqual(3);

    const { page, pageErrors } = await openPage();
    // The list's reads, as sent (the document goes by its hash): the paged reads with no page number.
    const reads: Record<string, unknown>[] = [];
    page.on('request', (r) => {
      const body =
        r.method() === 'POST' && r.url().endsWith('/graphql') ? (JSON.parse(r.postData() ?? '{}') as { variables?: Record<string, unknown> }) : {};
      if (body.variables && 'limit' in body.variables && !('page' in body.variables)) reads.push(body.variables);
    });
    await connect(page);
    await page.getByTestId('nav-do-not-call').click();
    const pageLabel = () => page.getByTestId('dnc-page').textContent();
    const rows = () =>
      page.locator('table.suppressions tbody tr[data-phone-number]').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-phone-number')!));
    await expect.poll(pageLabel).toBe(`Page 1 of ${pages}`);
    expect(await page.getByTestId('dnc-newer').isDisabled()).toBe(true);

    const seen: string[][] = [await rows()];
    for (let n = 2; n <= pages; n++) {
      await page.getByTestId('dnc-older').click();
      await expect.poll(pageLabel).toBe(`Page ${n} of ${pages}`);
      seen.push(await rows());
    }
    expect(await page.getByTestId('dnc-older').isDisabled()).toBe(true);
    // Every number once, newest first across the pages, which were read by cursor, never by page number.
    const all = seen.flat();
    expect(all).toHaveLength(total);
    expect(new Set(all).size).toBe(total);
    expect(seen.slice(0, -1).every((p) => p.length === 50)).toBe(true);
    expect(reads.filter((v) => typeof v.cursor === 'string')).toHaveLength(pages - 1);

    // Newer goes back through the pages read: the same rows as before.
    await page.getByTestId('dnc-newer').click();
    await expect.poll(pageLabel).toBe(`Page ${pages - 1} of ${pages}`);
    expect(await rows()).toEqual(seen[pages - 2]);
    await page.getByTestId('dnc-first').click();
    await expect.poll(pageLabel).toBe(`Page 1 of ${pages}`);
    expect(await rows()).toEqual(seen[0]);
    expect(await page.getByTestId('dnc-first').isDisabled()).toBe(true);
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 60_000);

  it("shows each caller-ID number's health: area code, dials today, rates, rest", async () => {
    const { page, pageErrors } = await openPage();
    await connect(page);
    await page.getByTestId('nav-numbers').click();
    const rows = page.locator('table.numbers tbody tr[data-did]');
    await expect.poll(() => rows.count()).toBeGreaterThan(0);
    // The demo account's number placed the batches the tests before ran: today's dials and rates show.
    const cells = await rows.first().locator('td').allTextContents();
    expect(cells[0]).toMatch(/^\+1\d{10}$/);
    expect(cells[1]).toBe(cells[0].slice(2, 5));
    expect(Number(cells[2])).toBeGreaterThan(0);
    expect(cells[3]).toMatch(/^\d+(\.\d)? %$/);
    expect(cells[5]).toBe('—');
    await page.screenshot({ path: path.join(OUTPUT, 'dashboard-numbers.png') });
    expect(pageErrors).toEqual([]);
  });
});
