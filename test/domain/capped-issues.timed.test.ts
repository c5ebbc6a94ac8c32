// Past the cap, a problem found in order costs one comparison (timed project: a wall-clock budget,
// measured alone). What is kept: capped-issues.test.ts.
import { describe, expect, it } from 'vitest';
import { CappedIssues, MAX_LISTED_ISSUES } from '../../src/domain/capped-issues.ts';
import { CREATE_BATCH_FIELD_ORDER } from '../../src/domain/create-batch-fields.ts';

describe('CappedIssues', () => {
  it('a million problems found in order cost one comparison each past the cap', () => {
    const c = new CappedIssues(CREATE_BATCH_FIELD_ORDER);
    const started = performance.now();
    for (let i = 0; i < 1_000_000; i++) c.add(['contacts', i], 'Input should be a valid dictionary');
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(c.list()).toHaveLength(MAX_LISTED_ISSUES + 1);
  });
});
