// The writers of an account's caller-ID pool at once (docs/campaigns.md "Caller-ID pools and local
// presence"): the chooser of a claim round, updateDidNumber moving the default and addDidNumber
// with isDefault lock the pool's rows in one order, so none deadlocks the other; a clash the unique
// default index still meets is a clear 409, and an added number never outlives its failed request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.ts';
import { addDidNumber } from '../../src/services/accounts/catalog.ts';
import { updateDidNumber } from '../../src/services/accounts/caller-id-pool.ts';
import { chooseCallerIdsFor } from '../../src/dispatch/store/caller-id-choice.ts';
import { AppError } from '../../src/errors.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** Settles every promise; any failure other than a 409 (AppError CONFLICT) is the test's failure. */
async function onlyConflicts<T>(work: Promise<T>[]): Promise<PromiseSettledResult<T>[]> {
  const results = await Promise.allSettled(work);
  for (const r of results) if (r.status === 'rejected' && !(r.reason instanceof AppError && r.reason.code === 'CONFLICT')) throw r.reason;
  return results;
}

describe('caller-ID pool writers at once', () => {
  it('numbers added as the default at once: each is added and made the default whole, or not added at all', async () => {
    const a = await t.seedAccount();
    const numbers = Array.from({ length: 6 }, (_, i) => `+1212555${String(7000 + i)}`);
    const results = await onlyConflicts(numbers.map((n) => addDidNumber(t.deps.db, a.account, n, { isDefault: true, dailyCap: 10 })));
    const rows = await t.deps.db.prisma.didNumber.findMany({ where: { accountId: a.account.id } });
    numbers.forEach((n, i) =>
      expect(
        rows.some((r) => r.number === n),
        n,
      ).toBe(results[i].status === 'fulfilled'),
    );
    expect(rows.filter((r) => r.isDefault)).toHaveLength(1);
    // Added again: the number exists, a 409 that says so.
    await expect(addDidNumber(t.deps.db, a.account, numbers[0])).rejects.toMatchObject({
      code: 'CONFLICT',
      message: expect.stringContaining('already exists'),
    });
  });

  it('the default moved back and forth during claim rounds: no deadlock, no 500, each round chooses', async () => {
    const a = await t.seedAccount();
    const dids = [a.did];
    for (let i = 0; i < 3; i++) dids.push(await addDidNumber(t.deps.db, a.account, `+1305555${String(7100 + i)}`));
    const now = new Date('2026-03-02T15:00:00.000Z');
    const calls = Array.from({ length: 5 }, (_, i) => ({ callId: `call_none_${i}`, to: '+13055552000', fixedDidId: null }));
    const moves = Array.from({ length: 12 }, (_, i) => updateDidNumber(t.deps.db, a.account, dids[(i * 3) % dids.length].id, { isDefault: true }));
    const rounds = Array.from({ length: 12 }, () => chooseCallerIdsFor(t.deps, { accountId: a.account.id, workerId: 'w1', now, calls }));
    await onlyConflicts(moves);
    // The calls are nobody's (no lease): each round locks and reads the pool, chooses, counts nothing.
    for (const r of await Promise.all(rounds)) expect(r.pool).toHaveLength(dids.length);
    const defaults = await t.deps.db.prisma.didNumber.count({ where: { accountId: a.account.id, isDefault: true } });
    expect(defaults).toBe(1);
  });
});
