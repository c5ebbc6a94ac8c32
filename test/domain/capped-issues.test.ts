import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CappedIssues, MAX_LISTED_ISSUES, moreProblems } from '../../src/domain/capped-issues.ts';
import { readContactList } from '../../src/domain/contact-list.ts';
import { checkCreateBatchRequest } from '../../src/domain/create-batch-request.ts';
import { contactCountProblem, CREATE_BATCH_FIELD_ORDER, MAX_CONTACTS_PER_REQUEST } from '../../src/domain/create-batch-fields.ts';
import { formatIssue, inFieldOrder, type PathIssue } from '../../src/domain/field-issue.ts';

const ORDER = CREATE_BATCH_FIELD_ORDER;
const collect = (issues: PathIssue[], cap: number) => {
  const c = new CappedIssues(ORDER, cap);
  for (const i of issues) c.add(i.path, i.reason);
  return c;
};

describe('CappedIssues', () => {
  it('lists the first `cap` in field order whatever order they were found in, then one line counting the rest', () => {
    const found: PathIssue[] = [
      { path: ['contacts', 2, 'phoneNumber'], reason: 'c2' },
      { path: ['contacts', 0, 'contactId'], reason: 'c0' },
      { path: ['callingWindow', 'start'], reason: 'window' },
      { path: ['agentId'], reason: 'agent' },
      { path: ['contacts', 1], reason: 'c1' },
    ];
    const c = collect(found, 3);
    expect(c.count).toBe(5);
    expect(c.list().map((i) => i.reason)).toEqual(['agent', 'c0', 'c1', '... and 2 more problems']);
    expect(c.list(1).map((i) => i.reason)).toEqual(['agent', '... and 4 more problems']);
    expect(collect(found, 10).list()).toEqual(inFieldOrder(found, ORDER));
    expect(collect([], 10).list()).toEqual([]);
  });

  it('the counting line reads the same on both surfaces and groups thousands', () => {
    expect(formatIssue(moreProblems(12_345))).toBe('... and 12,345 more problems');
    expect(formatIssue(moreProblems(1), (f) => f.toUpperCase(), 'body')).toBe('... and 1 more problem');
  });

  it('agrees with sorting everything and cutting, for any finding order (property)', () => {
    const issue = fc.oneof(
      fc.record({ path: fc.tuple(fc.constantFrom('agentId', 'metadata', 'retry', 'callingWindow', 'unknown')), reason: fc.string({ maxLength: 3 }) }),
      fc.record({
        path: fc.tuple(fc.constant('contacts'), fc.nat(50), fc.constantFrom('contactId', 'phoneNumber', 'timezone')),
        reason: fc.string({ maxLength: 3 }),
      }),
    );
    fc.assert(
      fc.property(fc.array(issue, { maxLength: 200 }), fc.integer({ min: 1, max: 20 }), (found, cap) => {
        const sorted = inFieldOrder(found, ORDER);
        const expected = sorted.length > cap ? [...sorted.slice(0, cap), moreProblems(sorted.length - cap)] : sorted;
        expect(collect(found, cap).list()).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('merging capped lists keeps the first `cap` of their union and adds up what they left out', () => {
    const a = collect(
      Array.from({ length: 30 }, (_, i) => ({ path: ['contacts', i, 'phoneNumber'], reason: `a${i}` })),
      5,
    );
    const b = collect(
      [
        { path: ['agentId'], reason: 'agent' },
        { path: ['retry', 'maxAttempts'], reason: 'retry' },
      ],
      5,
    );
    const all = new CappedIssues(ORDER, 5);
    all.addAll(a.list());
    all.addAll(b.list());
    expect(all.count).toBe(32);
    expect(all.list().map((i) => i.reason)).toEqual(['agent', 'a0', 'a1', 'a2', 'a3', '... and 27 more problems']);
  });

  it('a million problems found in order keep a bounded list (their cost: capped-issues.timed.test.ts)', () => {
    const c = new CappedIssues(ORDER);
    for (let i = 0; i < 1_000_000; i++) c.add(['contacts', i], 'Input should be a valid dictionary');
    const list = c.list();
    expect(list).toHaveLength(MAX_LISTED_ISSUES + 1);
    expect(list.at(-1)!.reason).toBe(`... and ${(1_000_000 - MAX_LISTED_ISSUES).toLocaleString('en-US')} more problems`);
  });
});

describe('long lists of bad contacts', () => {
  const junk = Array.from({ length: 1_000_000 }, () => 'x');

  it('readContactList reports its first problems and counts the rest (no spread of a million arguments)', () => {
    const { issues } = readContactList(junk, ['contacts']);
    expect(issues).toHaveLength(MAX_LISTED_ISSUES + 1);
    expect(issues[0]).toEqual({ path: ['contacts', 0], reason: 'Input should be a valid dictionary' });
    expect(issues.at(-1)!.more).toBe(1_000_000 - MAX_LISTED_ISSUES);
  });

  it('checkCreateBatchRequest lists the first MAX_LISTED_ISSUES of 200,000 per-contact problems', () => {
    const contacts = Array.from({ length: 200_000 }, (_, i) => ({ contactId: `c${i}`, phoneNumber: '1' }));
    const result = checkCreateBatchRequest({
      agentId: 'a',
      versionId: 'v',
      interruption: true,
      useAlternateNumber: false,
      startMode: 'manual',
      scheduleDate: '2030-01-15',
      scheduleTime: '09:30',
      scheduleTimezone: 'UTC',
      contacts,
    });
    expect(result.ok).toBe(false);
    const issues = !result.ok ? result.issues : [];
    expect(issues).toHaveLength(MAX_LISTED_ISSUES + 1);
    expect(formatIssue(issues[0])).toBe('contacts.0.phoneNumber: String should have at least 8 characters');
    expect(formatIssue(issues.at(-1)!)).toBe(`... and ${(200_000 - MAX_LISTED_ISSUES).toLocaleString('en-US')} more problems`);
  });
});

describe('contactCountProblem', () => {
  it("the account's max_batch_size in the contract's words first, then the ceiling", () => {
    expect(contactCountProblem(5, 5)).toBeNull();
    expect(contactCountProblem(6, 5)).toBe("Too many contacts: 6 submitted, the account's max_batch_size is 5");
    expect(contactCountProblem(MAX_CONTACTS_PER_REQUEST + 1, 10)).toBe(
      `Too many contacts: ${MAX_CONTACTS_PER_REQUEST + 1} submitted, the account's max_batch_size is 10`,
    );
    expect(contactCountProblem(MAX_CONTACTS_PER_REQUEST)).toBeNull();
    expect(contactCountProblem(MAX_CONTACTS_PER_REQUEST + 1)).toBe(
      `Too many contacts: ${MAX_CONTACTS_PER_REQUEST + 1} submitted, a request may carry at most ${MAX_CONTACTS_PER_REQUEST}`,
    );
    expect(contactCountProblem(MAX_CONTACTS_PER_REQUEST + 1, 2 * MAX_CONTACTS_PER_REQUEST)).toMatch(/a request may carry at most/);
  });
});
