// The Vapi provider on injected time: its poll and create backoff are timers of the scheduler it is
// given and its reconcile throttle is counted in polls, so a test advances time instead of waiting.
import { afterEach, describe, expect, it } from 'vitest';
import type { PlaceCallRequest, ProviderCallEvent } from '../../src/dispatch/voice/provider.ts';
import { createVapiProvider, type VapiProviderOptions } from '../../src/dispatch/voice/vapi/provider.ts';
import { startFakeVapi, type FakeVapi } from '../helpers/fake-vapi.ts';
import { TestClock } from '../helpers/clock.ts';
import { manualTimers } from '../helpers/dispatch.ts';
import { waitFor } from '../helpers/wait.ts';

const KEY = 'vapi_key_manual_0123456789';
const POLL_MS = 10;

function req(n: number): PlaceCallRequest {
  return {
    callId: `call_${n}`,
    batchId: 'batch_1',
    accountId: 'acc_1',
    attempt: 1,
    from: '+14155550100',
    to: `+1415555012${n % 10}`,
    agent: { id: 'agt-1', name: 'Ava', voice: 'alloy', outcomeKeys: [] },
    prompt: { id: 'pmt-1', name: 'v1', text: 'Hello' },
    contact: { externalId: `c${n}`, name: 'Jo', metadata: {} },
    recordingEnabled: false,
    interruption: false,
    // Due at once (with graceMs 0): every poll may reconcile it, as far as the throttle lets it.
    maxDurationSeconds: 0,
  };
}

describe('Vapi provider on injected time', () => {
  let fake: FakeVapi | undefined;
  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });

  async function setup(over: Partial<VapiProviderOptions>) {
    fake = await startFakeVapi({ apiKey: KEY, auth: { mode: 'secret', secret: 'whsec_manual' }, deliver: async () => 204 });
    let gets = 0;
    fake.lookupRule((x) => {
      if (x.kind === 'get') gets += 1;
      return null;
    });
    const timers = manualTimers(new TestClock());
    const p = createVapiProvider({
      baseUrl: fake.url,
      account: async () => ({ apiKey: KEY, phoneNumberIds: { '*': 'pn_1' }, assistantId: 'asst_1' }),
      assistant: async () => null,
      feed: async () => [],
      reports: async () => [],
      now: timers.now,
      scheduler: timers,
      pollMs: POLL_MS,
      graceMs: 0,
      backoffMs: 1,
      ...over,
    });
    const events: ProviderCallEvent[] = [];
    p.onEvent((e) => events.push(e));
    return { p, fake, timers, events, gets: () => gets };
  }

  it('polls only when the scheduler fires, and fetches a due call once per five polls', async () => {
    const { p, fake, timers, events, gets } = await setup({});
    await p.placeCall(req(1));
    expect([timers.pending(), gets()]).toEqual([1, 0]);
    const seen: number[] = [];
    for (let i = 1; i <= 11; i++) {
      timers.advance(POLL_MS);
      await waitFor(() => timers.pending() === 1, { what: 'the poll done and the next one armed' });
      seen.push(gets());
    }
    expect(seen).toEqual([1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3]);
    await fake.finishAll();
    for (let i = 0; i < 5 && events.length === 0; i++) {
      timers.advance(POLL_MS);
      await waitFor(() => timers.pending() === 1 || events.length > 0, { what: 'the poll done' });
    }
    await waitFor(() => events.some((e) => e.type === 'ended'), { what: 'the call settled from GET /call' });
    expect(gets()).toBe(4);
    await p.close();
  });

  it("waits out a create's backoff on the scheduler: a minute of it passes at once", async () => {
    const { p, fake, timers } = await setup({ backoffMs: 60_000 });
    fake.failNext(1, 503);
    let placed: string | null = null;
    const placing = p.placeCall(req(2)).then((r) => (placed = r.providerCallId));
    await waitFor(() => timers.pending() === 1, { what: 'the backoff armed' });
    expect([placed, fake.creates.length]).toEqual([null, 0]);
    timers.advance(60_000);
    await placing;
    expect(fake.creates).toHaveLength(1);
    expect(placed).toBe([...fake.calls.keys()][0]);
    await p.close();
  });
});
