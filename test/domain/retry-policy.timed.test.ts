// parseInstant refuses a long text without reading it (timed project: a wall-clock budget, measured alone).
import { describe, expect, it } from 'vitest';
import { parseInstant } from '../../src/domain/retry-policy.ts';

describe('parseInstant', () => {
  it('refuses a long text without looking at it', () => {
    const start = performance.now();
    expect(parseInstant('2'.repeat(5_000_000))).toBeNull();
    expect(performance.now() - start).toBeLessThan(50);
  });
});
