// The Retell provider on injected time: its poll and create backoff are timers of the scheduler it
// is given, its throttles are counted in polls or read from the app clock, so a test advances time
// instead of waiting for it, and a frozen app clock stalls nothing.
import { afterEach, describe, expect, it } from 'vitest';
import { createRetellProvider, type RetellProviderOptions } from '../../src/dispatch/voice/retell/provider.ts';
import type { PlaceCallRequest, ProviderCallEvent } from '../../src/dispatch/voice/provider.ts';
import { fakeOutcome, startFakeRetell, type FakeRetell } from '../helpers/fake-retell.ts';
import { TestClock } from '../helpers/clock.ts';
import { manualTimers } from '../helpers/dispatch.ts';
import { waitFor } from '../helpers/wait.ts';

const KEY = 'key_test_retell_manual_0123';
const POLL_MS = 10;

function req(n: number): PlaceCallRequest {
  return {
    callId: `call_${n}`,
    batchId: 'batch_1',
    accountId: 'acc_1',
    attempt: 1,
    from: '+14155550100',
    to: `+1415555012${n % 10}`,
    agent: { id: 'agt-1', name: 'Ava', voice: 'retell-Cimo', outcomeKeys: [] },
    prompt: { id: 'pmt-1', name: 'v1', text: 'Hello' },
    contact: { externalId: `c${n}`, name: 'Jo', metadata: {} },
    recordingEnabled: false,
    interruption: false,
    // Overdue at once (with graceMs 0): every poll may reconcile it, as far as the throttle lets it.
    maxDurationSeconds: 0,
  };
}

describe('retell provider on injected time', () => {
  let fake: FakeRetell;
  afterEach(async () => fake?.close());

  const provider = (o: Partial<RetellProviderOptions>) =>
    createRetellProvider({
      baseURL: fake.url,
      account: async () => ({ apiKey: KEY }),
      agent: async () => ({ agentId: 'agent_abc', agentVersion: 3 }),
      feed: async () => [],
      analyzed: async () => [],
      now: () => new Date(),
      pollMs: POLL_MS,
      graceMs: 0,
      backoffMs: 1,
      ...o,
    });

  /** Counts the get-calls Retell is asked, per Retell call. */
  function countGets() {
    let gets = 0;
    fake.lookupRule((x) => {
      if (x.kind === 'get') gets += 1;
      return null;
    });
    return () => gets;
  }

  it('polls only when the scheduler fires, and reconciles a call once per five polls', async () => {
    fake = await startFakeRetell({ apiKey: KEY });
    const timers = manualTimers(new TestClock());
    const p = provider({ scheduler: timers, now: timers.now });
    const gets = countGets();
    const got: ProviderCallEvent[] = [];
    p.onEvent((e) => got.push(e));
    await p.placeCall(req(1));
    // The poll is armed on the manual timers, not the process's: nothing has asked Retell yet.
    expect([timers.pending(), gets()]).toEqual([1, 0]);
    const pollOnce = async () => {
      timers.advance(POLL_MS);
      await waitFor(() => timers.pending() === 1, { what: 'the poll done and the next one armed' });
    };
    // Retell still has the call ongoing: get-call on polls 1, 6 and 11 (5 × 10 ms apart), none between.
    const seen: number[] = [];
    for (let i = 1; i <= 11; i++) {
      await pollOnce();
      seen.push(gets());
    }
    expect(seen).toEqual([1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3]);
    await fake.finishAll({ dropEnded: () => true });
    for (let i = 0; i < 4; i++) await pollOnce();
    expect(got).toEqual([]);
    // The fifth poll after the last get-call asks again, finds the call ended and settles it.
    timers.advance(POLL_MS);
    await waitFor(() => got.length > 0, { what: 'the call settled by get-call' });
    expect(got[0]).toMatchObject({ type: 'ended', result: { status: fakeOutcome(req(1).to).status } });
    expect(gets()).toBe(4);
    await p.close();
  });

  it('keeps reconciling on real timers while the app clock stands still', async () => {
    fake = await startFakeRetell({ apiKey: KEY });
    const clock = new TestClock();
    clock.set(new Date('2030-01-01T00:00:00Z'));
    const p = provider({ now: () => clock.now() });
    const gets = countGets();
    const got: ProviderCallEvent[] = [];
    p.onEvent((e) => got.push(e));
    await p.placeCall(req(2));
    // A throttle on the frozen app clock would never let the second get-call through.
    await waitFor(() => gets() >= 2, { what: 'a second get-call of the ongoing call' });
    await fake.finishAll({ dropEnded: () => true });
    await waitFor(() => got.length > 0, { what: 'the call settled by get-call' });
    await p.close();
  });

  it("waits out a create's backoff on the scheduler: a minute of it passes at once", async () => {
    fake = await startFakeRetell({ apiKey: KEY });
    const timers = manualTimers(new TestClock());
    const p = provider({ scheduler: timers, now: timers.now, backoffMs: 60_000 });
    fake.failNext(1, 503);
    let placed: string | null = null;
    const placing = p.placeCall(req(3)).then((r) => (placed = r.providerCallId));
    // The 503 answered, the retry waits on the manual timers (the only one armed: no call watched yet).
    await waitFor(() => timers.pending() === 1, { what: 'the backoff armed' });
    expect([placed, fake.creates.length]).toEqual([null, 0]);
    timers.advance(60_000);
    await placing;
    expect(placed).toBe('rc_1');
    expect(fake.creates).toHaveLength(1);
    await p.close();
  });
});
