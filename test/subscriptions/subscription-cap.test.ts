// One API key holds a bounded number of subscriptions and sockets open in a process
// (MAX_SUBSCRIPTIONS_PER_KEY): past it a subscription is refused with RATE_LIMITED and a socket is
// closed with 4429; closing one makes room again. Other keys are not affected.
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { sseStream } from '../helpers/subscriptions.ts';

const MAX = 2;
let t: TestApp;
let a: SeededAccount;
let b: SeededAccount;
let url: string;

beforeAll(async () => {
  t = await createTestApp({ config: { MAX_SUBSCRIPTIONS_PER_KEY: String(MAX) } });
  url = await t.app.listen();
  a = await t.seedAccount({ limits: { rateLimitPerMinute: 10_000 } });
  b = await t.seedAccount({ limits: { rateLimitPerMinute: 10_000 } });
});
afterAll(() => t.close());

const ACCOUNT_BATCHES = 'subscription { accountBatches { batchId } }';
const sse = (key: string) => sseStream<{ accountBatches: { batchId: string } }>(fetch, url, ACCOUNT_BATCHES, undefined, key);

/** The close code of a socket that sends connection_init with `key`. */
function socketClose(key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url.replace(/^http/, 'ws') + '/graphql', 'graphql-transport-ws');
    ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${key}` } })));
    ws.on('message', (m) => {
      if (JSON.parse(String(m)).type === 'connection_ack') {
        ws.close(1000);
        resolve(1000);
      }
    });
    ws.on('close', (code) => resolve(code));
    ws.on('error', reject);
  });
}

describe(`subscriptions per API key (MAX_SUBSCRIPTIONS_PER_KEY ${MAX})`, () => {
  it('refuses the one past the cap, over SSE and WebSocket, and makes room when one ends', async () => {
    const open = [sse(a.apiKey), sse(a.apiKey)];
    try {
      // Both streams are tracked once the server has answered their requests.
      await Promise.all(open.map((s) => s.response));
      const refused = sse(a.apiKey);
      const errors = await refused.firstError();
      expect(errors[0]).toMatchObject({
        message: `At most ${MAX} subscriptions and sockets at once per API key`,
        extensions: { code: 'RATE_LIMITED' },
      });
      refused.close();
      expect(await socketClose(a.apiKey)).toBe(4429);
      // Another key is not affected.
      expect(await socketClose(b.apiKey)).toBe(1000);

      open.shift()!.close();
      await expect.poll(async () => socketClose(a.apiKey), { timeout: 15_000 }).toBe(1000);
    } finally {
      for (const s of open) s.close();
    }
  });
});
