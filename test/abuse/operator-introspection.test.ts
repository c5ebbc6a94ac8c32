// The operator surface (admin* operations and their types) is not introspectable without the
// admin token: anonymous clients and tenants see the schema they can use; the operator sees all.
import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';

let t: TestApp;
let a: SeededAccount;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount();
});
afterAll(() => t.close());

interface IntrospectedType {
  name: string;
  fields: { name: string }[] | null;
}

async function introspect(key: string | null) {
  const r = await t.gql(getIntrospectionQuery(), {}, key);
  expect(r.body.errors).toBeUndefined();
  const types = r.body.data.__schema.types as IntrospectedType[];
  const rootFields = types.filter((ty) => ty.name === 'Query' || ty.name === 'Mutation').flatMap((ty) => ty.fields!.map((f) => f.name));
  return { rootFields, typeNames: types.map((ty) => ty.name) };
}

describe('introspection of the operator surface', () => {
  it('anonymous and tenant introspection list no admin operation or admin-only type', async () => {
    for (const key of [null, a.apiKey]) {
      const { rootFields, typeNames } = await introspect(key);
      expect(rootFields).toContain('createCallBatch');
      expect(rootFields.filter((f) => f.startsWith('admin'))).toEqual([]);
      expect(typeNames).not.toContain('AdminCreateAccountInput');
      const direct = await t.gql('{ __type(name: "AdminCreateAccountInput") { name } }', {}, key);
      expect(direct.body.data).toEqual({ __type: null });
    }
  });

  it('the operator sees the whole schema; tenants asking for admin operations are still FORBIDDEN', async () => {
    const { rootFields, typeNames } = await introspect(ADMIN_TOKEN);
    expect(rootFields).toEqual(expect.arrayContaining(['adminCreateAccount', 'adminRevokeApiKey', 'adminAccounts']));
    expect(typeNames).toContain('AdminCreateAccountInput');
    const refused = await t.gql('{ adminAccounts { id } }', {}, a.apiKey);
    expect(refused.body.errors[0].extensions.code).toBe('FORBIDDEN');
  });

  it('a document mixing introspection and data still answers the data', async () => {
    const r = await t.gql('{ __typename me { id } __type(name: "Query") { fields { name } } }', {}, a.apiKey);
    expect(r.body.data.me).toEqual({ id: a.account.id });
    expect(r.body.data.__type.fields.map((f: { name: string }) => f.name)).not.toContain('adminAccounts');
  });
});
