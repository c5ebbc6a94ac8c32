import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { wsClient, wsOnce } from '../helpers/ws-client.ts';

let t: TestApp;
let a: SeededAccount;
let url: string;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount();
  url = await t.app.listen();
});
afterAll(() => t.close());

describe('GraphQL over WebSocket (graphql-transport-ws)', () => {
  it('authenticates at connection_init and scopes the operation to the key', async () => {
    const client = wsClient(url, `Bearer ${a.apiKey}`);
    const res = await wsOnce(client, '{ me { id } }');
    expect(res.data).toEqual({ me: { id: a.account.id } });
    await client.dispose();
  });

  it('closes the connection with 4401 for a missing or unknown key', async () => {
    for (const auth of [undefined, 'Bearer sk_' + 'x'.repeat(43)]) {
      const client = wsClient(url, auth);
      await expect(wsOnce(client, '{ me { id } }')).rejects.toMatchObject({ code: 4401 });
      await client.dispose();
    }
  });

  it('closes with 4403 for an account without API access', async () => {
    const c = await t.seedAccount({ apiAccessEnabled: false });
    const client = wsClient(url, `Bearer ${c.apiKey}`);
    await expect(wsOnce(client, '{ me { id } }')).rejects.toMatchObject({ code: 4403 });
    await client.dispose();
  });
});
