// The national do-not-call registry and reassigned-number results: streamed imports (add, remove,
// full replacement of the area codes given), the create's scrub with its consent exemption, and
// the claim's refusal of a number listed after the create.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type SeededAccount, type TestApp } from '../helpers/app.ts';
import { batchBody, CALL_BATCHES } from '../helpers/batch-requests.ts';
import { insertBatch } from '../helpers/fixtures.ts';
import { expectConsistentBatch, manualSimulator, testWorker } from '../helpers/dispatch.ts';
import { finishFullImport, importReassignedNumbers, importRegistryNumbers, registryClock } from '../../src/services/registry/import-registry.ts';
import { runStatement } from '../../src/db/sql-statement.ts';
import { REASSIGNED_CONTACT_MESSAGE, REGISTRY_CONTACT_MESSAGE } from '../../src/domain/registry.ts';

let t: TestApp;
let a: SeededAccount;
let exempt: SeededAccount;

beforeAll(async () => {
  t = await createTestApp();
  a = await t.seedAccount({ limits: { maxConcurrentCalls: 50 } });
  exempt = await t.seedAccount({ limits: { maxConcurrentCalls: 50 } });
  // The operator's setting, through the admin API.
  const set = await t.gql(
    `mutation($id: ID!) { adminUpdateAccount(id: $id, input: { registryConsentExempt: true }) { registryConsentExempt } }`,
    { id: exempt.account.id },
    ADMIN_TOKEN,
  );
  expect(set.body.data.adminUpdateAccount.registryConsentExempt).toBe(true);
});
afterAll(() => t.close());
beforeEach(async () => {
  t.clock.set(new Date('2026-05-05T15:00:00.000Z'));
  await runStatement(t.deps.db, 'DELETE FROM dnc_registry_blocks');
  await runStatement(t.deps.db, 'DELETE FROM reassigned_numbers');
});

/** The text as a byte stream in chunks of `size` bytes, so lines cross chunk boundaries. */
async function* stream(text: string, size = 7): AsyncGenerator<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

/** A claim, the simulated calls' end, and a second claim (nothing more waits in these batches). */
async function runAll(worker: ReturnType<typeof testWorker>, sim: ReturnType<typeof manualSimulator>) {
  await worker.runOnce();
  await worker.settle();
  sim.timers.advance(1_000);
  await worker.settle();
  await worker.runOnce();
  await worker.settle();
  await worker.drain();
}

async function listed(numbers: string[]): Promise<boolean[]> {
  const rows = await runStatement<{ listed: boolean }>(
    t.deps.db,
    'SELECT registry_listed(n) AS listed FROM unnest($1::text[]) WITH ORDINALITY AS u(n, i) ORDER BY i',
    [numbers],
  );
  return rows.map((r) => r.listed);
}

describe('registry import', () => {
  it('reads the download format and its variants, counts and names bad lines, and bounds a line', async () => {
    const text = [
      '2015550123',
      '201,5550124',
      '+1 (201) 555-0125',
      '12125550000',
      'phone_number',
      '',
      '1015550123', // area code starting with 1
      '2011550123', // exchange starting with 1
      '20155501', // too short
      '201555012x',
      '9'.repeat(500), // longer than a line may be
      '2125559999',
    ].join('\n');
    const r = await importRegistryNumbers(t.deps.db, stream(text), { mode: 'add' });
    expect(r).toMatchObject({ lines: 12, numbers: 5, badLines: 5, blocks: 2, areaCodes: [201, 212] });
    expect(r.badLineSamples.map((b) => b.line)).toEqual([7, 8, 9, 10, 11]);
    expect(r.badLineSamples[4].text.length).toBe(64);
    expect(await listed(['+12015550123', '+12015550124', '+12015550125', '+12125550000', '+12125559999', '+12015550126', '+442015550123'])).toEqual([
      true,
      true,
      true,
      true,
      true,
      false,
      false,
    ]);
  });

  it('merges an add with what is listed, removes a delta, and deletes a block left empty', async () => {
    await importRegistryNumbers(t.deps.db, stream('2015550001\n2015550002\n'), { mode: 'add' });
    await importRegistryNumbers(t.deps.db, stream('2015550003\n'), { mode: 'add' });
    expect(await listed(['+12015550001', '+12015550002', '+12015550003'])).toEqual([true, true, true]);
    await importRegistryNumbers(t.deps.db, stream('2015550002\n'), { mode: 'remove' });
    expect(await listed(['+12015550001', '+12015550002', '+12015550003'])).toEqual([true, false, true]);
    await importRegistryNumbers(t.deps.db, stream('2015550001\n2015550003'), { mode: 'remove' });
    const [{ n }] = await runStatement<{ n: number }>(t.deps.db, 'SELECT count(*)::int AS n FROM dnc_registry_blocks');
    expect(n).toBe(0);
  });

  it('a full import replaces the listed numbers of its area codes and leaves other area codes alone', async () => {
    await importRegistryNumbers(t.deps.db, stream('2015550001\n2016660001\n3055550001\n'), { mode: 'add' });
    const since = await registryClock(t.deps.db);
    // To the microsecond, so a block written just before (within the same millisecond) is before it.
    expect(since).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const [{ before }] = await t.deps.db.prisma.$queryRawUnsafe<{ before: boolean }[]>(
      'SELECT bool_and(updated_at < $1::timestamptz) AS before FROM dnc_registry_blocks',
      since,
    );
    expect(before).toBe(true);
    // The area code's new file, in two parts (as the CLI sends a large file), one block in both.
    const first = await importRegistryNumbers(t.deps.db, stream('2015550009\n'), { mode: 'full', since });
    const second = await importRegistryNumbers(t.deps.db, stream('2015550010\n'), { mode: 'full', since, firstLine: 2 });
    const removed = await finishFullImport(t.deps.db, since, [...new Set([...first.areaCodes, ...second.areaCodes])]);
    expect(removed).toBe(1); // 201-666 is not in the new file
    expect(await listed(['+12015550001', '+12015550009', '+12015550010', '+12016660001', '+13055550001'])).toEqual([false, true, true, false, true]);
  });
});

describe('create scrub', () => {
  const consent = { source: 'web_form', timestamp: '2026-01-10T12:00:00Z', text: 'I agree to be called', reference: 'form-42' };

  it('refuses a listed number with its own reason, drops a listed alternate, and exempts consent only where the account says so', async () => {
    await importRegistryNumbers(t.deps.db, stream('4155550101\n4155550102\n4155550109\n'), { mode: 'add' });
    const contacts = [
      { contact_id: 'c1', phone_number: '+14155550100' },
      { contact_id: 'c2', phone_number: '+14155550101' },
      { contact_id: 'c3', phone_number: '+14155550102', consent },
      { contact_id: 'c4', phone_number: '+14155550103', metadata: { alternate_number: '+14155550109' } },
      { contact_id: 'c5', phone_number: '+442071838750' },
    ];
    const res = await t.request('POST', CALL_BATCHES, { key: a.apiKey, body: batchBody(a, { contacts }) });
    expect(res.status).toBe(201);
    expect(res.body.data.validation_errors).toEqual([
      { index: 2, external_id: 'c2', field: 'phone_number', message: REGISTRY_CONTACT_MESSAGE },
      { index: 3, external_id: 'c3', field: 'phone_number', message: REGISTRY_CONTACT_MESSAGE },
    ]);
    const calls = await t.deps.db.prisma.call.findMany({ where: { batchId: res.body.data.batch_id }, orderBy: { seq: 'asc' } });
    expect(calls.map((c) => [c.externalId, c.alternatePhone])).toEqual([
      ['c1', null],
      ['c4', null],
      ['c5', null],
    ]);

    const exempted = await t.request('POST', CALL_BATCHES, { key: exempt.apiKey, body: batchBody(exempt, { contacts }) });
    expect(exempted.body.data.validation_errors.map((e: { external_id: string }) => e.external_id)).toEqual(['c2']);
  });

  it('refuses a number reassigned on or after the consent date, whatever the account exempts', async () => {
    await importReassignedNumbers(t.deps.db, stream('phone_number,reassigned_on\n4155550201,2026-01-10\n4155550202,2026-01-09\nbad,2026-01-01\n'));
    const contacts = [
      { contact_id: 'same-day', phone_number: '+14155550201', consent },
      { contact_id: 'before', phone_number: '+14155550202', consent },
      { contact_id: 'no-consent', phone_number: '+14155550201' },
    ];
    const res = await t.request('POST', CALL_BATCHES, { key: exempt.apiKey, body: batchBody(exempt, { contacts }) });
    expect(res.body.data.validation_errors).toEqual([
      { index: 1, external_id: 'same-day', field: 'phone_number', message: REASSIGNED_CONTACT_MESSAGE },
    ]);
  });
});

describe('dial time', () => {
  it('cancels a call whose number was listed after the create; a consented call of an exempt account is dialled', async () => {
    const sim = manualSimulator(t.clock, { callMs: 1_000 });
    const worker = testWorker(t.deps, { providers: sim.registry });
    const numbers = ['+14155550304', '+14155550305', '+14155550306'];
    const { batch } = await insertBatch(t.deps, a, { contacts: 3, callOverrides: (i) => ({ status: 'queued', phoneNumber: numbers[i] }) });
    const { batch: consented } = await insertBatch(t.deps, exempt, {
      contacts: 1,
      callOverrides: () => ({ status: 'queued', phoneNumber: numbers[1], consentSource: 'web_form', consentAt: new Date('2026-01-01T00:00:00Z') }),
    });
    await importRegistryNumbers(t.deps.db, stream('4155550305\n'), { mode: 'add' });
    await runAll(worker, sim);
    const calls = await t.deps.db.prisma.call.findMany({ where: { batchId: batch.id }, orderBy: { seq: 'asc' } });
    expect(calls.map((c) => [c.status, c.disconnectReason, c.attempts])).toEqual([
      ['completed', expect.any(String), 1],
      ['cancelled', 'suppressed', 0],
      ['completed', expect.any(String), 1],
    ]);
    await expectConsistentBatch(t.deps, batch.id);
    expect((await t.deps.db.prisma.call.findFirstOrThrow({ where: { batchId: consented.id } })).attempts).toBe(1);
  });

  it('cancels a consented call whose number was reassigned after the consent', async () => {
    const sim = manualSimulator(t.clock, { callMs: 1_000 });
    const worker = testWorker(t.deps, { providers: sim.registry });
    const { batch } = await insertBatch(t.deps, exempt, {
      contacts: 1,
      callOverrides: () => ({
        status: 'queued',
        phoneNumber: '+14155550407',
        consentSource: 'web_form',
        consentAt: new Date('2026-01-01T00:00:00Z'),
      }),
    });
    await importReassignedNumbers(t.deps.db, stream('4155550407,2026-03-01\n'));
    await runAll(worker, sim);
    const [call] = await t.deps.db.prisma.call.findMany({ where: { batchId: batch.id } });
    expect([call.status, call.disconnectReason, call.attempts]).toEqual(['cancelled', 'suppressed', 0]);
  });
});
