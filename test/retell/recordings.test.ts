// Retell-held recordings are served only through our signed, expiring /recordings link, which
// proxies the audio; an expired provider link is refreshed through get-call (at most once a minute
// per call, also after the account left Retell); the proxy refuses to fetch from private addresses
// it was not configured for, and streams long recordings without cutting them at its deadline.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testWorker } from '../helpers/dispatch.ts';
import { fakeRecording } from '../helpers/fake-retell.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import { fetchRecording } from '../../src/http/recording-proxy.ts';
import { recordingUrl } from '../../src/services/recording-url.ts';
import { setAccountProvider } from '../../src/services/accounts/provider-config.ts';
import { pinnedRequest } from '../../src/services/webhooks/pinned-request.ts';
import { batchSettled, RETELL_KEY, retellApp, sleep, until, type RetellApp } from './retell-app.ts';

let r: RetellApp;
let callId = '';
let providerCallId = '';
let otherCalls: string[] = [];

beforeAll(async () => {
  // RETELL_API_KEY: the key that still reaches Retell after an account switched to the simulator.
  r = await retellApp({ config: { RETELL_API_KEY: RETELL_KEY } });
  const { t, fake, a } = r;
  const { batch, calls } = await insertBatch(t.deps, a, {
    contacts: 3,
    callOverrides: (i) => ({ status: 'queued', phoneNumber: `+1415555013${4 + i}` }),
  });
  callId = calls[0].id;
  otherCalls = calls.slice(1).map((c) => c.id);
  const w = testWorker(t.deps);
  w.start();
  try {
    await until(() => fake.calls.size === 3, undefined, 'dials');
    await fake.finishAll();
    await fake.analyzeAll();
    await until(() => batchSettled(t, batch.id), undefined, 'batch');
  } finally {
    await w.stop({ graceMs: 0 });
  }
  providerCallId = (await t.deps.db.prisma.call.findUniqueOrThrow({ where: { id: callId } })).providerCallId!;
});
afterAll(() => r.close());

const get = (url: string) => {
  const u = new URL(url);
  return r.t.app.fetch(new Request(`http://test.local${u.pathname}${u.search}`));
};

describe('Retell recordings', () => {
  it("stores Retell's recording_url as the source and hands out only our signed link", async () => {
    const rec = await r.t.deps.db.prisma.recording.findUniqueOrThrow({ where: { callId } });
    expect(rec.data).toBeNull();
    expect(rec.sourceUrl).toBe(r.fake.calls.get(providerCallId)!.recording_url);
    const call = await r.t.deps.db.prisma.call.findUniqueOrThrow({ where: { id: callId } });
    expect(call.recordingAvailable).toBe(true);
    const listed = await r.t.request('GET', `/api/v1/public/call-batches/${call.batchId}/calls`, { key: r.a.apiKey });
    expect(listed.status).toBe(200);
    const text = JSON.stringify(listed.body);
    expect(text).toContain(`/recordings/${callId}.wav?expires=`);
    expect(text).not.toContain(r.fake.url);
  });

  it('proxies the audio behind the signed link; refuses unsigned, tampered and expired links', async () => {
    const signed = recordingUrl(r.t.deps, callId);
    const ok = await get(signed);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('audio/wav');
    expect(Buffer.from(await ok.arrayBuffer())).toEqual(fakeRecording(providerCallId));
    expect((await get(signed.replace(/signature=[^&]+/, 'signature=AAAA'))).status).toBe(403);
    expect((await get(signed.split('?')[0])).status).toBe(403);
    r.t.clock.advance(2 * 3600_000);
    try {
      expect((await get(signed)).status).toBe(403);
    } finally {
      r.t.clock.advance(-2 * 3600_000);
    }
  });

  it("refreshes Retell's expired recording link through get-call", async () => {
    const before = (await r.t.deps.db.prisma.recording.findUniqueOrThrow({ where: { callId } })).sourceUrl;
    r.fake.expireRecordings();
    const res = await get(recordingUrl(r.t.deps, callId));
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer())).toEqual(fakeRecording(providerCallId));
    const after = (await r.t.deps.db.prisma.recording.findUniqueOrThrow({ where: { callId } })).sourceUrl;
    expect(after).not.toBe(before);
    expect(after).toBe(r.fake.calls.get(providerCallId)!.recording_url);
  });

  it('never fetches a source on a private address outside the configured Retell origin', async () => {
    const fetchesBefore = r.fake.recordingFetches;
    await r.t.deps.db.prisma.recording.update({ where: { callId }, data: { sourceUrl: 'http://169.254.169.254/latest/meta-data/recording.wav' } });
    const res = await get(recordingUrl(r.t.deps, callId));
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({ detail: 'Recording is temporarily unavailable' });
    expect(r.fake.recordingFetches).toBe(fetchesBefore);
  });
});

describe('Retell recording link refreshes', () => {
  it('asks Retell for a fresh link at most once a minute per call, however often a stale link is requested', async () => {
    const id = otherCalls[0];
    const link = recordingUrl(r.t.deps, id);
    const before = r.fake.getCalls;
    r.fake.expireRecordings();
    expect((await get(link)).status).toBe(200);
    expect(r.fake.getCalls - before).toBe(1);
    // Expired again within the minute: not asked again (the link stays unavailable meanwhile).
    r.fake.expireRecordings();
    expect((await get(link)).status).toBe(502);
    expect((await get(link)).status).toBe(502);
    expect(r.fake.getCalls - before).toBe(1);
    r.t.clock.advance(61_000);
    try {
      const res = await get(recordingUrl(r.t.deps, id));
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      expect(r.fake.getCalls - before).toBe(2);
    } finally {
      r.t.clock.advance(-61_000);
    }
  });

  it('refreshes a Retell recording after its account switched to the simulator', async () => {
    const id = otherCalls[1];
    await setAccountProvider(r.t.deps, r.a.account.id, 'simulator', null);
    try {
      r.fake.expireRecordings();
      const res = await get(recordingUrl(r.t.deps, id));
      expect(res.status).toBe(200);
      const providerId = (await r.t.deps.db.prisma.call.findUniqueOrThrow({ where: { id } })).providerCallId!;
      expect(Buffer.from(await res.arrayBuffer())).toEqual(fakeRecording(providerId));
    } finally {
      await setAccountProvider(r.t.deps, r.a.account.id, 'retell', { apiKey: RETELL_KEY });
    }
  });
});

describe('the recording proxy', () => {
  const audio = Buffer.alloc(64 * 1024, 7);
  let server: http.Server;
  let origin = '';
  /** The deadline the slow download outlasts; generous, so a loaded machine still gets the headers in time. */
  const DEADLINE_MS = 2_000;
  /**
   * /slow: headers and a first piece at once, the rest only after DEADLINE_MS has passed (a slow
   * provider: however late this process runs, the download outlasts the deadline); /stall:
   * headers and a piece, then nothing; /silent: nothing.
   */
  beforeAll(async () => {
    server = http.createServer(async (req, res) => {
      if (req.url === '/silent.wav') return;
      res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': String(audio.length) });
      const piece = audio.length / 8;
      res.write(audio.subarray(0, piece));
      if (req.url === '/stall.wav') return;
      await sleep(DEADLINE_MS + 300);
      res.end(audio.subarray(piece));
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((ok) => server.close(ok));
  });

  it('streams a recording that takes longer than its deadline to the end, as long as data keeps coming', async () => {
    const started = Date.now();
    const up = await fetchRecording(`${origin}/slow.wav`, { trustedOrigin: origin, timeoutMs: DEADLINE_MS, idleMs: 20_000 });
    expect(up.ok).toBe(true);
    if (!up.ok) return;
    expect(up.contentLength).toBe(String(audio.length));
    expect(Buffer.from(await new Response(up.body).arrayBuffer())).toEqual(audio);
    expect(Date.now() - started).toBeGreaterThan(DEADLINE_MS);
  });

  it('cuts a download that stalls, and gives up on a provider that never answers', async () => {
    const stalled = await fetchRecording(`${origin}/stall.wav`, { trustedOrigin: origin, timeoutMs: 5_000, idleMs: 200 });
    expect(stalled.ok).toBe(true);
    if (stalled.ok) await expect(new Response(stalled.body).arrayBuffer()).rejects.toThrow();
    expect(await fetchRecording(`${origin}/silent.wav`, { trustedOrigin: origin, timeoutMs: 200 })).toEqual({
      ok: false,
      error: 'timed out after 200 ms',
    });
  });

  it('bounds the DNS lookup by the same deadline', async () => {
    const res = await pinnedRequest({
      url: 'https://recordings.example.com/a.wav',
      method: 'GET',
      allowPrivate: false,
      timeoutMs: 100,
      resolver: () => new Promise(() => undefined),
    });
    expect(res).toEqual({ ok: false, unsafe: false, timedOut: true, error: 'DNS lookup timed out' });
  });
});
