import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_SIM_LENGTH, createSimulatorProvider, parseSimOutcomes, type SimulatorClock } from '../../src/dispatch/voice/simulator.ts';
import { callDurations, callStatusForEvent, type PlaceCallRequest, type ProviderCallEvent } from '../../src/dispatch/voice/provider.ts';
import { buildTranscript, firstSentence, humaniseKey, truncateTranscript } from '../../src/dispatch/voice/transcript.ts';
import { WAV_HEADER_BYTES } from '../../src/dispatch/recording/wav.ts';

/** Manual clock: timers fire only inside advance(), in due-time then scheduling order. */
function manualClock(start = Date.parse('2025-03-01T10:00:00.000Z')) {
  let now = start;
  let nextId = 0;
  const timers = new Map<number, { due: number; fn: () => void }>();
  const clock: SimulatorClock & { advance(ms: number): void; pending(): number } = {
    now: () => new Date(now),
    setTimeout(fn, ms) {
      const id = ++nextId;
      timers.set(id, { due: now + ms, fn });
      return id;
    },
    clearTimeout(h) {
      timers.delete(h as number);
    },
    advance(ms) {
      const until = now + ms;
      for (;;) {
        const next = [...timers.entries()].filter(([, t]) => t.due <= until).sort((a, b) => a[1].due - b[1].due || a[0] - b[0])[0];
        if (!next) break;
        timers.delete(next[0]);
        now = next[1].due;
        next[1].fn();
      }
      now = until;
    },
    pending: () => timers.size,
  };
  return clock;
}

type Seen = ProviderCallEvent & { providerCallId: string };

function request(to: string, over: Partial<PlaceCallRequest> = {}): PlaceCallRequest {
  return {
    callId: `call_${to}`,
    batchId: 'sched_1',
    accountId: 'acc_1',
    attempt: 1,
    from: '+14155550100',
    to,
    agent: { id: 'agt-1', name: 'Ava', voice: 'alloy', outcomeKeys: ['interest'] },
    prompt: { id: 'pmt-1', name: 'v1', text: 'You are calling to confirm the delivery window. Be brief and polite.' },
    contact: { externalId: 'c-1', name: 'Jane Doe', metadata: { orderId: 'A-17', delivery_date: '2025-03-04' } },
    recordingEnabled: true,
    interruption: false,
    maxDurationSeconds: 600,
    ...over,
  };
}

function setup(callMs = 10_000, ringMs?: number) {
  const clock = manualClock();
  const sim = createSimulatorProvider({ callMs, ringMs, clock });
  const events: Seen[] = [];
  sim.onEvent((e) => events.push(e));
  return { clock, sim, events };
}

const ended = (events: Seen[]) => {
  const e = events.find((x) => x.type === 'ended');
  if (!e || e.type !== 'ended') throw new Error('no ended event');
  return e.result;
};

describe('simulator outcomes by last digit', () => {
  const cases: Array<[string, string[], string, string | null, string]> = [
    ['0', ['ringing', 'ended'], 'no_answer', null, 'no_answer'],
    ['1', ['ringing', 'ended'], 'busy', null, 'busy'],
    ['2', ['ended'], 'failed', 'system', 'dial_failed'],
    ['3', ['ringing', 'answered', 'ended'], 'completed', 'user', 'normal'],
    ...['4', '5', '6', '7', '8', '9'].map(
      (d) => [d, ['ringing', 'answered', 'ended'], 'completed', 'agent', 'agent_hangup'] as [string, string[], string, string | null, string],
    ),
  ];

  for (const [digit, types, status, hangupBy, reason] of cases) {
    it(`last digit ${digit} -> ${status} (${reason})`, async () => {
      const { clock, sim, events } = setup();
      const { providerCallId } = await sim.placeCall(request(`+1415555012${digit}`));
      clock.advance(10_000);
      expect(events.map((e) => e.type)).toEqual(types);
      expect(events.every((e) => e.providerCallId === providerCallId && e.callId === `call_+1415555012${digit}`)).toBe(true);
      const r = ended(events);
      expect(r.status).toBe(status);
      expect(r.hangupBy).toBe(hangupBy);
      expect(r.disconnectReason).toBe(reason);
      const answered = status === 'completed';
      expect(r.answeredAt !== null).toBe(answered);
      expect(r.transcript !== null).toBe(answered);
      expect(r.recording !== null).toBe(answered);
      expect(callStatusForEvent(events[events.length - 1])).toBe(status);
      expect(clock.pending()).toBe(0);
    });
  }
});

describe("simulator outcomes by the contact's sim key", () => {
  it('parses one outcome per attempt, case-insensitively, ignoring spaces around commas', () => {
    expect(parseSimOutcomes('no_answer,completed')).toEqual(['no_answer', 'completed']);
    expect(parseSimOutcomes(' Busy , VOICEMAIL,failed ')).toEqual(['busy', 'voicemail', 'failed']);
    expect(parseSimOutcomes('completed')).toEqual(['completed']);
    const longest = `${'no_answer,'.repeat(25)}failed`;
    expect(longest).toHaveLength(MAX_SIM_LENGTH);
    expect(parseSimOutcomes(longest)).toEqual([...Array(25).fill('no_answer'), 'failed']);
  });

  it('refuses anything else, so the last-digit rule holds', () => {
    for (const v of [
      undefined,
      null,
      3,
      true,
      ['busy'],
      { busy: 1 },
      '',
      ' ',
      'busy,',
      ',busy',
      'busy,,failed',
      'answered',
      'no answer',
      'busy;failed',
      'voicemail_reached',
    ]) {
      expect(parseSimOutcomes(v), JSON.stringify(v)).toBeNull();
    }
    const tooLong = `${'no_answer,'.repeat(25)} failed`;
    expect(tooLong).toHaveLength(MAX_SIM_LENGTH + 1);
    expect(parseSimOutcomes(tooLong)).toBeNull();
  });

  /** Each attempt's end, on numbers whose last digit (4) alone would mean completed by the agent. */
  async function attempts(simValue: unknown, count: number) {
    const { clock, sim, events } = setup(10_000, 2_000);
    const contact = { externalId: 'c-1', name: 'Jane Doe', metadata: { orderId: 'A-17', sim: simValue } };
    const ends = [];
    for (let attempt = 1; attempt <= count; attempt++) {
      events.length = 0;
      // The alternate number's dial counts as an attempt like any other.
      await sim.placeCall(request(attempt === 1 ? '+14155550124' : '+14155550134', { attempt, contact }));
      clock.advance(10_000);
      const r = ended(events);
      ends.push({
        types: events.map((e) => e.type).join(','),
        status: r.status,
        hangupBy: r.hangupBy,
        reason: r.disconnectReason,
        answered: r.answeredAt !== null,
        transcript: r.transcript !== null,
        recording: r.recording !== null,
        ms: r.endedAt.getTime() - r.startedAt.getTime(),
      });
    }
    expect(clock.pending()).toBe(0);
    return ends;
  }

  const COMPLETED = {
    types: 'ringing,answered,ended',
    status: 'completed',
    hangupBy: 'agent',
    reason: 'agent_hangup',
    answered: true,
    transcript: true,
    recording: true,
    ms: 10_000,
  };
  const NO_ANSWER = {
    types: 'ringing,ended',
    status: 'no_answer',
    hangupBy: null,
    reason: 'no_answer',
    answered: false,
    transcript: false,
    recording: false,
    ms: 10_000,
  };
  const BUSY = {
    types: 'ringing,ended',
    status: 'busy',
    hangupBy: null,
    reason: 'busy',
    answered: false,
    transcript: false,
    recording: false,
    ms: 2_000,
  };
  const FAILED = {
    types: 'ended',
    status: 'failed',
    hangupBy: 'system',
    reason: 'dial_failed',
    answered: false,
    transcript: false,
    recording: false,
    ms: 0,
  };
  const VOICEMAIL = {
    types: 'ringing,ended',
    status: 'no_answer',
    hangupBy: 'system',
    reason: 'voicemail',
    answered: false,
    transcript: false,
    recording: false,
    ms: 10_000,
  };

  it('plays the N-th entry on attempt N and repeats the last one', async () => {
    expect(await attempts('no_answer,completed', 3)).toEqual([NO_ANSWER, COMPLETED, COMPLETED]);
    expect(await attempts('voicemail,busy,failed', 4)).toEqual([VOICEMAIL, BUSY, FAILED, FAILED]);
    expect(await attempts('failed, Voicemail ,NO_ANSWER', 3)).toEqual([FAILED, VOICEMAIL, NO_ANSWER]);
    expect(await attempts('busy', 2)).toEqual([BUSY, BUSY]);
  });

  it('voicemail: rings, then ends as no_answer by the system after the whole call length, with nothing recorded', async () => {
    expect(await attempts('voicemail', 2)).toEqual([VOICEMAIL, VOICEMAIL]);
  });

  it("voicemail plays out the batch's setting: the message left a ring's length longer, else hung up", async () => {
    const end = async (voicemail?: PlaceCallRequest['voicemail']) => {
      const { clock, sim, events } = setup(10_000, 2_000);
      const contact = { externalId: 'c-1', name: null, metadata: { sim: 'voicemail' } };
      await sim.placeCall(request('+14155550124', { contact, ...(voicemail ? { voicemail } : {}) }));
      clock.advance(12_000);
      const r = ended(events);
      return { reason: r.disconnectReason, answered: r.answeredAt !== null, left: r.voicemailLeft, ms: r.endedAt.getTime() - r.startedAt.getTime() };
    };
    expect(await end({ action: 'leave_message', message: 'Call us back' })).toEqual({ reason: 'voicemail', answered: false, left: true, ms: 12_000 });
    expect(await end({ action: 'hangup' })).toEqual({ reason: 'voicemail', answered: false, left: false, ms: 10_000 });
    expect(await end()).toEqual({ reason: 'voicemail', answered: false, left: false, ms: 10_000 });
  });

  it("leaves the `sim` control key out of the transcript, and reads the contact's other details", async () => {
    const { clock, sim, events } = setup();
    await sim.placeCall(
      request('+14155550105', { contact: { externalId: 'c-1', name: 'Jane Doe', metadata: { sim: 'completed', orderId: 'A-17' } } }),
    );
    clock.advance(10_000);
    const transcript = ended(events).transcript!;
    expect(transcript).toContain('A-17');
    expect(transcript.toLowerCase()).not.toContain('sim');
    expect(transcript).not.toContain('completed');
  });

  it('ignores an invalid sim value: the last digit decides', async () => {
    expect(await attempts('busy,maybe', 2)).toEqual([COMPLETED, COMPLETED]);
    expect(await attempts(7, 1)).toEqual([COMPLETED]);
    expect(await attempts(`${'busy,'.repeat(51)}busy`, 1)).toEqual([COMPLETED]); // too long
  });

  it('hangs up a call on voicemail like any unanswered call', async () => {
    const { clock, sim, events } = setup(10_000);
    const { providerCallId } = await sim.placeCall(
      request('+14155550124', { contact: { externalId: 'c-1', name: null, metadata: { sim: 'voicemail' } } }),
    );
    clock.advance(5_000);
    await sim.hangup(providerCallId, 'cancelled');
    expect(ended(events)).toMatchObject({
      status: 'failed',
      hangupBy: 'system',
      disconnectReason: 'cancelled',
      answeredAt: null,
      transcript: null,
      recording: null,
    });
    expect(clock.pending()).toBe(0);
  });
});

describe('simulator timeline', () => {
  it('rings at once, answers after ringMs, ends after callMs, with consistent durations', async () => {
    const { clock, sim, events } = setup(10_000, 3_000);
    const t0 = clock.now().getTime();
    await sim.placeCall(request('+14155550199'));
    expect(events).toEqual([]); // nothing synchronous with placeCall
    clock.advance(0);
    expect(events.map((e) => e.type)).toEqual(['ringing']);
    clock.advance(2_999);
    expect(events).toHaveLength(1);
    clock.advance(1);
    expect(events.map((e) => [e.type, e.at.getTime() - t0])).toEqual([
      ['ringing', 0],
      ['answered', 3_000],
    ]);
    clock.advance(6_999);
    expect(events).toHaveLength(2);
    clock.advance(1);
    const r = ended(events);
    expect(r.startedAt.getTime()).toBe(t0);
    expect(r.answeredAt?.getTime()).toBe(t0 + 3_000);
    expect(r.endedAt.getTime()).toBe(t0 + 10_000);
    expect(events[2].at).toEqual(r.endedAt);
    expect(callDurations(r)).toEqual({ durationSeconds: 10, answerDurationSeconds: 7 });
  });

  it('defaults ringMs to a fifth of callMs and ends busy calls after ringing', async () => {
    const { clock, sim, events } = setup(5_000);
    await sim.placeCall(request('+14155550198'));
    await sim.placeCall(request('+14155550191'));
    clock.advance(999);
    expect(events.map((e) => e.type)).toEqual(['ringing', 'ringing']);
    clock.advance(1);
    expect(events.map((e) => `${e.callId}:${e.type}`)).toEqual([
      'call_+14155550198:ringing',
      'call_+14155550191:ringing',
      'call_+14155550198:answered',
      'call_+14155550191:ended',
    ]);
  });

  it('rings a no-answer call for the whole call length', async () => {
    const { clock, sim, events } = setup(8_000);
    await sim.placeCall(request('+14155550190'));
    clock.advance(7_999);
    expect(events.map((e) => e.type)).toEqual(['ringing']);
    clock.advance(1);
    expect(callDurations(ended(events))).toEqual({ durationSeconds: 8, answerDurationSeconds: null });
  });

  it('with callMs 0 delivers every event asynchronously and in order (real timers)', async () => {
    const sim = createSimulatorProvider({ callMs: 0 });
    const events: Seen[] = [];
    const done = new Promise<void>((resolve) =>
      sim.onEvent((e) => {
        events.push(e);
        if (e.type === 'ended') resolve();
      }),
    );
    await sim.placeCall(request('+14155550197'));
    expect(events).toEqual([]);
    await done;
    expect(events.map((e) => e.type)).toEqual(['ringing', 'answered', 'ended']);
    const r = ended(events);
    expect(r.endedAt.getTime()).toBeGreaterThanOrEqual(r.answeredAt!.getTime());
    expect(r.answeredAt!.getTime()).toBeGreaterThanOrEqual(r.startedAt.getTime());
    await sim.close();
  });

  describe('with vitest fake timers and the default clock', () => {
    afterEach(() => {
      vi.useRealTimers();
    });
    it('follows the mocked time', async () => {
      vi.useFakeTimers({ now: new Date('2025-06-01T00:00:00.000Z') });
      const sim = createSimulatorProvider({ callMs: 60_000 });
      const events: Seen[] = [];
      sim.onEvent((e) => events.push(e));
      await sim.placeCall(request('+14155550196'));
      await vi.advanceTimersByTimeAsync(60_000);
      const r = ended(events);
      expect(r.startedAt.toISOString()).toBe('2025-06-01T00:00:00.000Z');
      expect(r.endedAt.toISOString()).toBe('2025-06-01T00:01:00.000Z');
      expect(callDurations(r)).toEqual({ durationSeconds: 60, answerDurationSeconds: 48 });
    });
  });
});

describe('simulator hangup', () => {
  it('ends an answered call at once as completed by the system, with a shortened transcript', async () => {
    const { clock, sim, events } = setup(10_000, 2_000);
    const { providerCallId } = await sim.placeCall(request('+14155550195'));
    clock.advance(4_000);
    await sim.hangup(providerCallId, 'max_duration');
    expect(clock.pending()).toBe(0); // the scheduled end is cancelled, not just ignored later
    expect(events.map((e) => e.type)).toEqual(['ringing', 'answered', 'ended']);
    const r = ended(events);
    expect(r).toMatchObject({ status: 'completed', hangupBy: 'system', disconnectReason: 'max_duration_reached' });
    expect(r.endedAt.getTime() - r.startedAt.getTime()).toBe(4_000);
    const full = buildTranscript({
      agentName: 'Ava',
      promptText: request('x').prompt.text,
      contactName: 'Jane Doe',
      metadata: request('x').contact.metadata,
      endedBy: 'agent',
    });
    expect(r.transcript).not.toBeNull();
    expect(full.startsWith(r.transcript!)).toBe(true);
    expect(r.transcript!.length).toBeLessThan(full.length);
    expect(r.recording).not.toBeNull();
    clock.advance(60_000);
    expect(events).toHaveLength(3); // the original 'ended' timer is gone
    expect(clock.pending()).toBe(0);
  });

  it('ends a ringing call as failed with reason cancelled and no transcript', async () => {
    const { clock, sim, events } = setup(10_000);
    const { providerCallId } = await sim.placeCall(request('+14155550194'));
    clock.advance(500);
    await sim.hangup(providerCallId, 'cancelled');
    const r = ended(events);
    expect(r).toMatchObject({
      status: 'failed',
      hangupBy: 'system',
      disconnectReason: 'cancelled',
      transcript: null,
      recording: null,
      answeredAt: null,
    });
    expect(events.map((e) => e.type)).toEqual(['ringing', 'ended']);
  });

  it('ends a call not yet ringing without a ringing event', async () => {
    const { clock, sim, events } = setup(10_000);
    const { providerCallId } = await sim.placeCall(request('+14155550194'));
    await sim.hangup(providerCallId, 'cancelled');
    clock.advance(20_000);
    expect(events.map((e) => e.type)).toEqual(['ended']);
  });

  it('ignores unknown and already-ended calls', async () => {
    const { clock, sim, events } = setup(1_000);
    const { providerCallId } = await sim.placeCall(request('+14155550194'));
    clock.advance(1_000);
    await sim.hangup(providerCallId, 'cancelled');
    await sim.hangup('sim_nope', 'cancelled');
    expect(events.filter((e) => e.type === 'ended')).toHaveLength(1);
  });
});

describe('simulator plumbing', () => {
  it('omits the recording when recording is disabled', async () => {
    const { clock, sim, events } = setup(3_000);
    await sim.placeCall(request('+14155550194', { recordingEnabled: false }));
    clock.advance(3_000);
    const r = ended(events);
    expect(r.recording).toBeNull();
    expect(r.transcript).not.toBeNull();
  });

  it('records a WAV whose length follows the answered time', async () => {
    const { clock, sim, events } = setup(5_000, 1_000);
    await sim.placeCall(request('+14155550194'));
    clock.advance(5_000);
    const rec = ended(events).recording as { contentType: string; data: Uint8Array };
    expect(rec.contentType).toBe('audio/wav');
    expect(rec.data.byteLength).toBe(WAV_HEADER_BYTES + 4 * 8000 * 2);
  });

  it('gives each placed call its own provider id, also for a retry of the same call', async () => {
    const { sim } = setup();
    const a = await sim.placeCall(request('+14155550194'));
    const b = await sim.placeCall(request('+14155550194', { attempt: 2 }));
    const c = await sim.placeCall(request('+14155550194'));
    expect(new Set([a.providerCallId, b.providerCallId, c.providerCallId]).size).toBe(3);
  });

  it('unsubscribes listeners and isolates a throwing one', async () => {
    const clock = manualClock();
    const errors: unknown[] = [];
    const sim = createSimulatorProvider({ callMs: 1_000, clock, onListenerError: (e) => errors.push(e) });
    const a: string[] = [];
    const b: string[] = [];
    sim.onEvent(() => {
      throw new Error('boom');
    });
    const offA = sim.onEvent((e) => a.push(e.type));
    sim.onEvent((e) => b.push(e.type));
    await sim.placeCall(request('+14155550194'));
    clock.advance(0);
    offA();
    clock.advance(1_000);
    expect(a).toEqual(['ringing']);
    expect(b).toEqual(['ringing', 'answered', 'ended']);
    expect(errors).toHaveLength(3);
  });

  it('drops in-flight calls on close and refuses new ones', async () => {
    const { clock, sim, events } = setup(1_000);
    await sim.placeCall(request('+14155550194'));
    await sim.close();
    clock.advance(5_000);
    expect(events).toEqual([]);
    expect(clock.pending()).toBe(0);
    await expect(sim.placeCall(request('+14155550194'))).rejects.toThrow(/closed/);
  });
});

describe('simulated transcript', () => {
  const base = {
    agentName: 'Ava',
    promptText: 'You are calling to confirm the delivery window.\nBe brief and polite.',
    contactName: 'Jane Doe',
    metadata: { orderId: 'A-17', delivery_date: '2025-03-04', vip: true, notes: null } as Record<string, unknown>,
    endedBy: 'agent' as const,
  };

  it('is an Agent/User conversation naming the agent, contact, goal and every metadata field', () => {
    const t = buildTranscript(base);
    const lines = t.split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(6);
    expect(lines.every((l) => /^(Agent|User): \S/.test(l))).toBe(true);
    expect(lines[0]).toBe("Agent: Hello Jane Doe, this is Ava. I'm calling to confirm the delivery window.");
    expect(lines[1].startsWith('User: ')).toBe(true);
    for (const s of ['order id is A-17', 'delivery date is 2025-03-04', 'vip is true', 'notes is not provided']) expect(t).toContain(s);
    expect(t).not.toContain('Be brief');
    expect(lines[lines.length - 1]).toMatch(/^Agent: Thank you for your time, Jane Doe/);
  });

  it('is deterministic, independent of metadata key order, and varies with input', () => {
    const reordered = { ...base, metadata: Object.fromEntries(Object.entries(base.metadata).reverse()) };
    expect(buildTranscript(base)).toBe(buildTranscript(reordered));
    const variants = new Set(
      ['Ann', 'Bob', 'Cleo', 'Dan', 'Eve', 'Finn', 'Gus', 'Hal'].map((n) =>
        buildTranscript({ ...base, contactName: n }).replace(new RegExp(n, 'g'), 'X'),
      ),
    );
    expect(variants.size).toBeGreaterThan(1); // answers (interest, callback) differ between contacts
  });

  it('ends with the user when the user hangs up', () => {
    const lines = buildTranscript({ ...base, endedBy: 'user' }).split('\n');
    expect(lines[lines.length - 1]).toMatch(/^User: .*Bye\.$/);
  });

  it('works without a contact name or metadata and groups long metadata', () => {
    const t = buildTranscript({ ...base, contactName: null, metadata: {} });
    expect(t.split('\n')[0]).toBe("Agent: Hello there, this is Ava. I'm calling to confirm the delivery window.");
    const many = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`field_${i}`, `v${i}`]));
    const tm = buildTranscript({ ...base, metadata: many });
    for (let i = 0; i < 10; i++) expect(tm).toContain(`field ${i}`);
  });

  it('helpers: first sentence, key humanising, truncation', () => {
    expect(firstSentence('  Sell   solar panels! Be nice.')).toBe('Sell solar panels!');
    expect(firstSentence('No full stop')).toBe('No full stop');
    expect(['phoneNumber', 'phone_number', 'Phone Number'].map(humaniseKey)).toEqual(['phone number', 'phone number', 'phone number']);
    expect(truncateTranscript('a\nb\nc\nd', 0.5)).toBe('a\nb');
    expect(truncateTranscript('a\nb\nc\nd', 0)).toBe('a');
    expect(truncateTranscript('a\nb', 3)).toBe('a\nb');
  });
});
