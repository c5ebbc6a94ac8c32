// The provider seam: a provider this service has never heard of, given only as a VoiceProviderModule,
// gets its route served, its account settings validated and sealed, its recordings asked about and
// its job run - by an app and a background built with it, which name no provider themselves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { startBackground } from '../../src/background.ts';
import { requestValidation } from '../../src/errors.ts';
import { accountProviderConfig } from '../../src/services/accounts/provider-config.ts';
import { storeProviderEvent, takeProviderEvents } from '../../src/dispatch/voice/provider-events.ts';
import { createRecordingSources } from '../../src/dispatch/voice/recording-sources.ts';
import { defaultProviderRegistry } from '../../src/dispatch/voice/registry.ts';
import { simulatorFromConfig, simulatorModule } from '../../src/dispatch/voice/simulator-module.ts';
import type { RecordingSource, VoiceProviderModule } from '../../src/dispatch/voice/provider-module.ts';

const TOKEN = 'echo-secret';
const jobs = { started: 0, stopped: 0 };
const asked: string[] = [];

/** A provider with every part: a signed event route, a required setting, recordings and a job. */
const echoModule: VoiceProviderModule = {
  name: 'echo',
  create: (deps) => simulatorFromConfig(deps),
  accountConfig(input) {
    if (typeof input.settings?.token !== 'string') throw requestValidation(['settings.token: Field required']);
    return { token: input.settings.token };
  },
  routes: (deps) => [
    {
      path: 'events',
      maxBodyBytes: 256,
      signatureHeader: 'x-echo-token',
      async receive(d) {
        if (d.header('x-echo-token') !== TOKEN) return { status: 401, detail: 'Invalid signature' };
        const body = d.body as { id: string; call: string };
        await storeProviderEvent(deps, { provider: 'echo', providerCallId: body.id, event: 'ended' }, body.call, body);
        return { status: 204 };
      },
    },
  ],
  recordings: {
    trustedOrigin: () => 'http://echo.internal:9000',
    source: () => ({
      async currentSource(callId) {
        asked.push(`echo:${callId}`);
        return callId === 'call_echo' ? 'http://echo.internal:9000/rec.wav' : null;
      },
    }),
  },
  jobs: () => {
    jobs.started += 1;
    return [{ stop: async () => void (jobs.stopped += 1) }];
  },
};

let t: TestApp;
let a: SeededAccount;
beforeAll(async () => {
  t = await createTestApp({ voiceProviders: [simulatorModule, echoModule] });
  a = await t.seedAccount();
});
afterAll(() => t.close());

describe('a provider module’s route', () => {
  const post = (raw: string, headers: Record<string, string> = { 'x-echo-token': TOKEN }) =>
    t.request('POST', '/providers/echo/events', { rawBody: raw, headers });

  it('is served under /providers/<name>/, read under the limits it declares, and stores events once', async () => {
    expect((await t.request('GET', '/providers/echo/events')).status).toBe(405);
    expect((await post('{}', {})).status).toBe(401);
    expect((await post('{}', { 'x-echo-token': 'wrong' })).body).toEqual({ detail: 'Invalid signature' });
    expect((await post(JSON.stringify({ pad: 'x'.repeat(300) }))).status).toBe(413);
    expect((await post('{not json')).body).toEqual({ detail: 'Invalid JSON' });
    const raw = JSON.stringify({ id: 'ec_1', call: 'call_seam_1' });
    expect((await post(raw)).status).toBe(204);
    expect((await post(raw)).status).toBe(204);
    expect(await takeProviderEvents(t.deps, 'echo', ['call_seam_1'])).toEqual([{ id: 'ec_1', call: 'call_seam_1' }]);
    expect(await takeProviderEvents(t.deps, 'echo', ['call_seam_1'])).toEqual([]);
  });

  it('exists only for providers the app was built with', async () => {
    expect((await t.request('POST', '/providers/retell/webhook', { rawBody: '{}', headers: { 'x-retell-signature': 'v=1,d=00' } })).status).toBe(404);
  });
});

describe('a provider module’s account settings', () => {
  const SET = `mutation($id: ID!, $p: String!, $s: JSON) { adminSetProvider(accountId: $id, provider: $p, settings: $s) }`;

  it('are validated by the provider, sealed, and forgotten on a switch to a provider that takes none', async () => {
    const missing = await t.gql(SET, { id: a.account.id, p: 'echo', s: {} }, ADMIN_TOKEN);
    expect(JSON.stringify(missing.body.errors)).toContain('settings.token');
    expect((await t.gql(SET, { id: a.account.id, p: 'echo', s: { token: 'abc' } }, ADMIN_TOKEN)).body).toEqual({
      data: { adminSetProvider: 'echo' },
    });
    expect(await accountProviderConfig(t.deps, a.account.id)).toEqual({ token: 'abc' });
    expect((await t.gql(SET, { id: a.account.id, p: 'simulator', s: { token: 'abc' } }, ADMIN_TOKEN)).body).toEqual({
      data: { adminSetProvider: 'simulator' },
    });
    expect(await accountProviderConfig(t.deps, a.account.id)).toBeNull();
  });

  it('name only providers the app was built with, and are a small flat object', async () => {
    const unknown = await t.gql(SET, { id: a.account.id, p: 'retell' }, ADMIN_TOKEN);
    expect(JSON.stringify(unknown.body.errors)).toContain(`provider: Input should be 'simulator' or 'echo'`);
    const tooMany = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v']));
    for (const s of [['token'], { token: { nested: 'x' } }, { token: 'x'.repeat(1001) }, tooMany]) {
      const bad = await t.gql(SET, { id: a.account.id, p: 'echo', s }, ADMIN_TOKEN);
      expect(JSON.stringify(bad.body.errors)).toContain('settings: Input should be an object of at most 20');
    }
  });
});

describe('a provider module’s recordings', () => {
  it('are asked in the registry’s order, past a provider that fails, and its origin is trusted', async () => {
    const failing: VoiceProviderModule = {
      name: 'broken',
      create: (deps) => simulatorFromConfig(deps),
      recordings: {
        trustedOrigin: () => undefined,
        source: (): RecordingSource => ({
          currentSource: async (callId) => {
            asked.push(`broken:${callId}`);
            throw new Error('provider down');
          },
        }),
      },
    };
    asked.length = 0;
    const sources = createRecordingSources([simulatorModule, failing, echoModule], t.deps);
    expect(sources.trustedOrigins).toEqual(['http://echo.internal:9000']);
    expect(await sources.currentSource('call_echo')).toBe('http://echo.internal:9000/rec.wav');
    expect(asked).toEqual(['broken:call_echo', 'echo:call_echo']);
    // Nobody holds it: the failure is what the caller learns.
    await expect(sources.currentSource('call_none')).rejects.toThrow('provider down');
    expect(await createRecordingSources([echoModule], t.deps).currentSource('call_none')).toBeNull();
    expect(t.deps.recordings.trustedOrigins).toEqual(['http://echo.internal:9000']);
  });
});

describe('a provider module in the worker and the background', () => {
  it('is what the worker’s registry offers, by its own name only', () => {
    const registry = defaultProviderRegistry(t.deps, [simulatorModule, echoModule]);
    expect(registry.has('echo')).toBe(true);
    expect(registry.get('echo')).toBe(registry.get('echo'));
    expect(registry.has('retell')).toBe(false);
    expect(registry.has('toString')).toBe(false);
    expect(() => registry.get('toString')).toThrow("No voice provider named 'toString'");
  });

  it('has its jobs started with the background work and stopped with it', async () => {
    const background = await startBackground(t.deps, { voiceProviders: [simulatorModule, echoModule] });
    try {
      expect(jobs).toEqual({ started: 1, stopped: 0 });
    } finally {
      await background.stop();
    }
    expect(jobs).toEqual({ started: 1, stopped: 1 });
  });
});
