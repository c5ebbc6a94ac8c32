import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse, print, Kind } from 'graphql';
import { createHash } from 'node:crypto';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { trustedDocuments } from '../../src/http/trusted-documents.ts';
import { DashboardMeDocument } from '../../src/codegen/graphql.ts';

let t: TestApp;
let a: SeededAccount;
const ids = trustedDocuments().idsByOperation;

beforeAll(async () => {
  // A small complexity budget, so one trusted document can be shown to be refused by cost.
  t = await createTestApp({ config: { GRAPHQL_MAX_COMPLEXITY: '150' } });
  a = await t.seedAccount();
});
afterAll(() => t.close());

const byHash = (hash: string, variables: Record<string, unknown> = {}, key: string | null = a.apiKey) =>
  t.request('POST', '/graphql', { key, body: { variables, extensions: { persistedQuery: { version: 1, sha256Hash: hash } } } });

describe('trusted documents', () => {
  it("holds every operation of the dashboard's document file, by the sha256 of its printed text", () => {
    const file = parse(readFileSync(new URL('../../src/web/operations/dashboard.graphql', import.meta.url), 'utf8'));
    const names = file.definitions.flatMap((d) => (d.kind === Kind.OPERATION_DEFINITION ? [d.name!.value] : []));
    expect(Object.keys(ids).sort()).toEqual(names.sort());
    const { byHash } = trustedDocuments();
    for (const [hash, doc] of byHash) expect(createHash('sha256').update(print(doc)).digest('hex')).toBe(hash);
  });

  it('runs a dashboard operation sent by hash alone', async () => {
    const res = await byHash(ids.DashboardMe);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { me: expect.objectContaining({ id: a.account.id, name: a.account.name }) } });
  });

  it('still authenticates a trusted document', async () => {
    const res = await byHash(ids.DashboardMe, {}, null);
    expect(res.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  it('still applies the cost limits to a trusted document', async () => {
    const res = await byHash(ids.DashboardCalls, { batchId: 'sched_x', page: 1, limit: 200 });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
  });

  it('refuses an unknown hash with a clear 400', async () => {
    for (const hash of ['0'.repeat(64), 'x'.repeat(10_000), ids.DashboardMe.toUpperCase()]) {
      const res = await byHash(hash);
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toMatchObject({ extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } });
      expect(res.body.errors[0].message).toMatch(/Unknown persisted document/);
    }
  });

  it('still runs documents sent as text (the API is public)', async () => {
    const res = await t.gql('{ me { id } }', {}, a.apiKey);
    expect(res.body).toEqual({ data: { me: { id: a.account.id } } });
  });

  it("gives the dashboard's bundle every hash, so the page sends them instead of text", async () => {
    const html = await (await t.app.fetch(new Request('http://localhost/dashboard'))).text();
    const script = html.match(/src="(\/dashboard\/assets\/app-[A-Z0-9]+\.js)"/)![1];
    const js = await (await t.app.fetch(new Request(`http://localhost${script}`))).text();
    for (const hash of Object.values(ids)) expect(js).toContain(hash);
  }, 60_000);

  it('a page built against other documents (a tab open across a deploy) falls back to sending the text', async () => {
    // The bundle's define, as an older build would have set it: a hash this server does not know.
    vi.stubGlobal('__DASHBOARD_DOCUMENT_IDS__', { DashboardMe: 'f'.repeat(64) });
    const sent: unknown[] = [];
    vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
      sent.push(JSON.parse(String(init.body)));
      return t.app.fetch(new Request(`http://localhost${url}`, init));
    });
    try {
      vi.resetModules();
      const { Api } = await import('../../src/web/api.ts');
      const api = new Api(a.apiKey, () => {});
      expect(await api.request(DashboardMeDocument, {})).toEqual({ me: expect.objectContaining({ id: a.account.id }) });
      expect(sent).toHaveLength(2);
      expect(sent[0]).toMatchObject({ extensions: { persistedQuery: { sha256Hash: 'f'.repeat(64) } } });
      expect(sent[1]).toMatchObject({ query: expect.stringContaining('DashboardMe') });
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
