// A contact's consent record: accepted on both surfaces beside the contract's fields, refused with
// clear 422s in both error forms, stored with the call, returned on REST call records, GraphQL's
// Call, the webhook call record and the CSV export (formula guard applied).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES } from '../helpers/batch-requests.ts';
import { MAX_CONSENT_REFERENCE_LENGTH, MAX_CONSENT_TEXT_LENGTH } from '../../src/domain/consent.ts';

let t: TestApp;
let a: SeededAccount;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount();
});
afterAll(() => t.close());

const consent = { source: 'web_form', timestamp: '2026-01-10T12:00:00+01:00', text: '=HYPERLINK("x") I agree', reference: 'form-42' };

describe('consent on create', () => {
  it('is stored with the call and returned on REST reads, GraphQL and the CSV export', async () => {
    const res = await t.request('POST', CALL_BATCHES, {
      key: a.apiKey,
      body: batchBody(a, {
        start_mode: 'manual',
        contacts: [
          { contact_id: 'c1', phone_number: '+14155550100', consent },
          { contact_id: 'c2', phone_number: '+14155550101' },
        ],
      }),
    });
    expect(res.status).toBe(201);
    const id = res.body.data.batch_id;
    const calls = await t.request('GET', `/api/v1/public/call-batches/${id}/calls`, { key: a.apiKey });
    expect(calls.status).toBe(200);
    const [first, second] = calls.body.data.items;
    expect(first.consent).toEqual({ source: 'web_form', timestamp: '2026-01-10T11:00:00.000Z', text: consent.text, reference: 'form-42' });
    expect(second.consent).toBeNull();
    const results = await t.request('GET', `/api/v1/public/call-batches/${id}/results`, { key: a.apiKey });
    expect(results.body.data.items[0].consent.source).toBe('web_form');

    const gql = (
      await t.gql(`query($id: ID!) { calls(batchId: $id) { items { externalId consent { source timestamp text reference } } } }`, { id }, a.apiKey)
    ).body;
    expect(gql.errors).toBeUndefined();
    expect(gql.data.calls.items.map((c: { consent: unknown }) => c.consent)).toEqual([
      { source: 'web_form', timestamp: '2026-01-10T11:00:00.000Z', text: consent.text, reference: 'form-42' },
      null,
    ]);

    const csv = await t.request('GET', `/api/v1/public/call-batches/${id}/results.csv`, { key: a.apiKey });
    expect(csv.status).toBe(200);
    const text = csv.body as string;
    const [header, row1] = text.split('\r\n');
    expect(header.split(',').slice(-3)).toEqual(['consent', 'voicemail_left', 'from_number']);
    // One JSON cell (a formula in the text stays inside it), quoted as CSV quotes JSON.
    expect(row1).toContain('""source"":""web_form""');
    expect(row1).toContain('""timestamp"":""2026-01-10T11:00:00.000Z""');
  });

  it('accepts the GraphQL input type', async () => {
    const { body: r } = await t.gql(
      `mutation($input: CreateCallBatchInput!) { createCallBatch(input: $input) { batchId acceptedContacts } }`,
      {
        input: {
          agentId: a.agent.id,
          versionId: a.version.id,
          interruption: false,
          useAlternateNumber: false,
          startMode: 'manual',
          scheduleDate: '2030-01-01',
          scheduleTime: '09:00',
          scheduleTimezone: 'America/New_York',
          contacts: [{ contactId: 'g1', phoneNumber: '+14155550102', consent: { source: 'ivr', timestamp: '2026-01-01T00:00:00Z' } }],
        },
      },
      a.apiKey,
    );
    expect(r.errors).toBeUndefined();
    const call = await t.deps.db.prisma.call.findFirstOrThrow({ where: { batchId: r.data.createCallBatch.batchId } });
    expect([call.consentSource, call.consentAt?.toISOString(), call.consentText, call.consentReference]).toEqual([
      'ivr',
      '2026-01-01T00:00:00.000Z',
      null,
      null,
    ]);
  });
});

describe('consent refusals', () => {
  const refused = async (c: unknown) => {
    const res = await t.request('POST', CALL_BATCHES, {
      key: a.apiKey,
      body: batchBody(a, { contacts: [{ contact_id: 'c1', phone_number: '+14155550100', consent: c }] }),
    });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('MISSING_PARAMETER');
    return res.body.error.details as string[];
  };

  it("names each problem at its path in the contract's words", async () => {
    expect(await refused('yes')).toEqual(['contacts.0.consent: Input should be a valid dictionary']);
    expect(await refused({ timestamp: '2026-01-01T00:00:00Z' })).toEqual(['contacts.0.consent.source: Field required']);
    expect(await refused({ source: 'web_form', timestamp: 5 })).toEqual(['contacts.0.consent.timestamp: Input should be a valid string']);
    expect(await refused({ source: '=cmd', timestamp: '2026-01-01' })).toEqual([
      "contacts.0.consent.source: Value error, a label of letters, digits, spaces and _ . : / -, starting with a letter or digit (e.g. 'web_form')",
      'contacts.0.consent.timestamp: Value error, Invalid datetime, expected ISO 8601 with a time zone (e.g. 2026-03-01T14:30:00Z)',
    ]);
    expect(await refused({ source: 'web_form', timestamp: '2099-01-01T00:00:00Z' })).toEqual([
      'contacts.0.consent.timestamp: Value error, consent cannot be given in the future',
    ]);
    expect(
      await refused({
        source: 'web_form',
        timestamp: '2026-01-01T00:00:00Z',
        text: 'x'.repeat(MAX_CONSENT_TEXT_LENGTH + 1),
        reference: 'r'.repeat(MAX_CONSENT_REFERENCE_LENGTH + 1),
      }),
    ).toEqual([
      `contacts.0.consent.text: String should have at most ${MAX_CONSENT_TEXT_LENGTH} characters`,
      `contacts.0.consent.reference: String should have at most ${MAX_CONSENT_REFERENCE_LENGTH} characters`,
    ]);
  });

  it('is a MISSING_PARAMETER on GraphQL too, with the same details', async () => {
    const { body: r } = await t.gql(
      `mutation($input: CreateCallBatchInput!) { createCallBatch(input: $input) { batchId } }`,
      {
        input: {
          agentId: a.agent.id,
          versionId: a.version.id,
          interruption: false,
          useAlternateNumber: false,
          startMode: 'manual',
          scheduleDate: '2030-01-01',
          scheduleTime: '09:00',
          scheduleTimezone: 'America/New_York',
          contacts: [{ contactId: 'g1', phoneNumber: '+14155550102', consent: { source: 'ivr', timestamp: 'yesterday' } }],
        },
      },
      a.apiKey,
    );
    expect(r.errors?.[0].extensions.code).toBe('MISSING_PARAMETER');
    expect(r.errors?.[0].extensions.details).toEqual([
      'contacts.0.consent.timestamp: Value error, Invalid datetime, expected ISO 8601 with a time zone (e.g. 2026-03-01T14:30:00Z)',
    ]);
  });
});
