// How long reading a create body's metadata takes: bounded by the limits, not by the input (timed
// project: a wall-clock budget, measured alone). What is refused: create-body.test.ts.
import { describe, expect, it } from 'vitest';
import { details, validBody } from '../helpers/create-body.ts';

describe('create body metadata', () => {
  it('is measured in time bounded by the limits, not by the input', () => {
    const list = new Array(5_000_000).fill(1);
    const text = 'x'.repeat(30_000_000);
    const started = performance.now();
    expect(details(validBody({ metadata: { list } }))).toEqual(['metadata: Value error, metadata is larger than 16384 bytes']);
    expect(details(validBody({ metadata: { text } }))).toEqual(['metadata: Value error, metadata value longer than 2000 characters']);
    expect(performance.now() - started).toBeLessThan(200);
  });
});
