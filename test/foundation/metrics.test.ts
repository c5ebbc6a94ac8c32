// GET /metrics: Prometheus text for the holder of METRICS_TOKEN (only), off without it. Scraped
// before, during and after a batch, the counters and gauges move with it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES, makeContacts } from '../helpers/batch-requests.ts';
import { manualSimulator, testWorker } from '../helpers/dispatch.ts';
import { buildApp } from '../../src/app.ts';

const METRICS_TOKEN = 'metrics-token-0123456789';
let t: TestApp;
let a: SeededAccount;

beforeAll(async () => {
  t = await createTestApp({ config: { METRICS_TOKEN } });
  a = await t.seedAccount();
});
afterAll(() => t.close());

const scrape = async (token: string | null = METRICS_TOKEN) =>
  t.app.fetch(new Request('http://test.local/metrics', { headers: token ? { authorization: `Bearer ${token}` } : {} }));

/** Every sample of the metric, whatever its labels, added up. */
const total = (text: string, name: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);

/** The sample's value in Prometheus text (labels given in the order the registry prints them). */
function sample(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((l) => l.startsWith(labels ? `${name}{${labels}} ` : `${name} `));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

describe('/metrics', () => {
  it('answers only the metrics token; is absent when it is not configured', async () => {
    expect((await scrape(null)).status).toBe(401);
    expect((await scrape('wrong-token-0123456789')).status).toBe(401);
    const ok = await scrape();
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(await ok.text()).toContain('callbatch_process_resident_memory_bytes');
    expect((await scrape(ADMIN_TOKEN)).status).toBe(401);
    const off = buildApp({ ...t.deps, config: { ...t.deps.config, METRICS_TOKEN: undefined } });
    expect((await off.fetch(new Request('http://test.local/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }))).status).toBe(404);
    await off.stop();
  });

  it('follows a batch: requests by route, calls waiting, in flight, placed and ended, webhook queue', async () => {
    const before = await (await scrape()).text();
    const sim = manualSimulator(t.clock, { callMs: 60_000, ringMs: 1_000 });
    const worker = testWorker(t.deps, { providers: sim.registry });
    const created = await t.request('POST', CALL_BATCHES, {
      key: a.apiKey,
      body: batchBody(a, { contacts: makeContacts(3, 'm'), concurrency: 2, callback_url: 'https://hooks.example.com/x' }),
    });
    expect(created.status).toBe(201);
    const route = 'method="POST",route="/api/v1/public/call-batches",status="201"';
    expect(sample(await (await scrape()).text(), 'callbatch_http_requests_total', route)).toBe(
      sample(before, 'callbatch_http_requests_total', route) + 1,
    );

    worker.start();
    try {
      // Two calls dialled and talking, one waiting for a slot. A claimed call is in flight while its
      // caller ID is chosen, before it is placed: wait for both counts.
      const placed = (text: string) => sample(text, 'callbatch_calls_placed_total') - sample(before, 'callbatch_calls_placed_total');
      await expect
        .poll(async () => {
          const text = await (await scrape()).text();
          return [sample(text, 'callbatch_calls_in_flight'), placed(text)];
        })
        .toEqual([2, 2]);
      const during = await (await scrape()).text();
      expect(sample(during, 'callbatch_calls_waiting')).toBe(1);
      expect(sample(during, 'callbatch_webhook_queue_depth')).toBeGreaterThan(0); // batch.started
      // The calls end (simulated time moves on); the third is dialled and ends too.
      await expect
        .poll(async () => {
          sim.timers.advance(61_000);
          return total(await (await scrape()).text(), 'callbatch_calls_ended_total') - total(before, 'callbatch_calls_ended_total');
        })
        .toBe(3);
      const after = await (await scrape()).text();
      expect(sample(after, 'callbatch_calls_in_flight')).toBe(0);
      expect(sample(after, 'callbatch_calls_waiting')).toBe(0);
      expect(after).toMatch(/callbatch_http_request_duration_seconds_bucket\{le="0\.005",method="POST",route="\/api\/v1\/public\/call-batches"\}/);
    } finally {
      await worker.stop({ graceMs: 0 });
    }
  });
});
