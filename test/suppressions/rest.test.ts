import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { validPhone } from '../helpers/batch-requests.ts';

const PATH = '/api/v1/public/suppressions';
let t: TestApp;
let a: SeededAccount;
let other: SeededAccount;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount();
  other = await t.seedAccount();
});
afterAll(() => t.close());

const add = (body: unknown, key = a.apiKey) => t.request('POST', PATH, { key, body });
const list = (query = '', key = a.apiKey) => t.request('GET', `${PATH}${query}`, { key });

describe('POST /suppressions', () => {
  it('adds numbers in E.164 and answers how many; adding them again is not an error', async () => {
    const first = await add({ phone_numbers: ['+1 (415) 550-0001', validPhone(2), validPhone(2)], reason: 'asked' });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ message: 'Suppressions added successfully', data: { added: 2, already_listed: 0 }, error: null });
    const again = await add({ phone_numbers: [validPhone(1), validPhone(3)] });
    expect(again.body.data).toEqual({ added: 1, already_listed: 1 });
    const page = await list();
    expect(page.body.data.pagination).toEqual({ page: 1, limit: 50, total: 3, has_more: false });
    const one = page.body.data.items.find((i: { phone_number: string }) => i.phone_number === validPhone(1));
    expect(one).toMatchObject({ phone_number: validPhone(1), reason: 'asked', source: 'api' });
  });

  it('refuses bad numbers and types with body.phone_numbers.<i> details, adding nothing', async () => {
    const res = await add({ phone_numbers: [validPhone(10), validPhone(11), validPhone(12), 'not a number'] });
    expect(res.status).toBe(422);
    expect(res.body.error.details).toEqual(['body.phone_numbers.3: Invalid phone number']);
    expect((await list(`?phone_number=${encodeURIComponent(validPhone(10))}`)).body.data.pagination.total).toBe(0);
    const typed = await add({ phone_numbers: ['+14155500001', 7], reason: 5 });
    expect(typed.status).toBe(422);
    expect(typed.body.error.details).toEqual(['body.phone_numbers.1: Input should be a valid string', 'body.reason: Input should be a valid string']);
    expect((await add({})).body.error.details).toEqual(['body.phone_numbers: Field required']);
    expect((await add({ phone_numbers: [] })).body.error.details).toEqual([
      'body.phone_numbers: List should have at least 1 item after validation, not 0',
    ]);
    const many = await add({ phone_numbers: Array.from({ length: 1001 }, (_, i) => validPhone(i)) });
    expect(many.status).toBe(422);
    expect(many.body.error.details).toEqual(['body.phone_numbers: List should have at most 1000 items after validation, not 1001']);
    const long = await add({ phone_numbers: [validPhone(1)], reason: 'x'.repeat(501) });
    expect(long.body.error.details).toEqual(['body.reason: String should have at most 500 characters']);
  });
});

describe('GET /suppressions', () => {
  it('pages and filters by phone_number in any form; another account sees nothing of it', async () => {
    const paged = await list('?limit=2&page=2');
    expect(paged.status).toBe(200);
    expect(paged.body.data.items).toHaveLength(1);
    expect(paged.body.data.pagination).toEqual({ page: 2, limit: 2, total: 3, has_more: false });
    const filtered = await list(`?phone_number=${encodeURIComponent('1-415-550-0002')}`);
    expect(filtered.body.data.items.map((i: { phone_number: string }) => i.phone_number)).toEqual([validPhone(2)]);
    expect((await list('?phone_number=garbage')).body.data.items).toEqual([]);
    const foreign = await list('', other.apiKey);
    expect(foreign.body.data.pagination.total).toBe(0);
    expect((await list('?limit=201')).status).toBe(422);
  });
});

describe('DELETE /suppressions/{phone_number}', () => {
  it('removes a number (URL-encoded or not) and answers 404 in the detail form when absent', async () => {
    expect((await t.request('DELETE', `${PATH}/${encodeURIComponent(validPhone(3))}`, { key: other.apiKey })).status).toBe(404);
    const res = await t.request('DELETE', `${PATH}/${encodeURIComponent(validPhone(3))}`, { key: a.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ phone_number: validPhone(3) });
    const again = await t.request('DELETE', `${PATH}/${validPhone(3)}`, { key: a.apiKey });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ detail: 'Phone number is not on the do-not-call list' });
    expect((await list()).body.data.pagination.total).toBe(2);
  });
});

describe('GraphQL', () => {
  it('adds, lists and removes with the same rules', async () => {
    const added = await t.gql(
      'mutation($n:[String!]!){ addSuppressions(phoneNumbers:$n, reason:"gql"){ added alreadyListed } }',
      { n: [validPhone(50), 'bad'] },
      other.apiKey,
    );
    expect(added.body.errors[0].extensions.details).toEqual(['phoneNumbers.1: Invalid phone number']);
    const ok = await t.gql(
      'mutation($n:[String!]!){ addSuppressions(phoneNumbers:$n){ added alreadyListed } }',
      { n: [validPhone(50)] },
      other.apiKey,
    );
    expect(ok.body.data.addSuppressions).toEqual({ added: 1, alreadyListed: 0 });
    const page = await t.gql('{ suppressions(limit: 10){ items { phoneNumber source } pagination { total } } }', {}, other.apiKey);
    expect(page.body.data.suppressions).toEqual({ items: [{ phoneNumber: validPhone(50), source: 'api' }], pagination: { total: 1 } });
    const removed = await t.gql('mutation($n:String!){ removeSuppression(phoneNumber:$n) }', { n: validPhone(50) }, other.apiKey);
    expect(removed.body.data.removeSuppression).toBe(validPhone(50));
  });
});
