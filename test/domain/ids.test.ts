import { describe, expect, it } from 'vitest';
import { ID_PREFIX, newId, newIds } from '../../src/domain/ids.ts';

describe('ids', () => {
  it('are the kind prefix and a UUIDv7 in 32 lowercase hex digits', () => {
    for (const kind of Object.keys(ID_PREFIX) as Array<keyof typeof ID_PREFIX>) {
      const id = newId(kind);
      expect(id.startsWith(ID_PREFIX[kind])).toBe(true);
      const hex = id.slice(ID_PREFIX[kind].length);
      expect(hex).toMatch(/^[0-9a-f]{12}7[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    }
  });

  it('carry the creation time in their first 48 bits', () => {
    const before = Date.now();
    const hex = newId('call').slice('call_'.length);
    expect(parseInt(hex.slice(0, 12), 16)).toBeGreaterThanOrEqual(before);
    expect(parseInt(hex.slice(0, 12), 16)).toBeLessThanOrEqual(Date.now() + 1);
  });

  it('increase strictly across bulk and single generation, past several random-buffer refills', () => {
    const ids = [...newIds('call', 5_000), newId('call'), ...newIds('call', 5_000)];
    for (let i = 1; i < ids.length; i++) expect(ids[i] > ids[i - 1], `${ids[i - 1]} < ${ids[i]}`).toBe(true);
    // The random tail differs: the words are not reused after a refill.
    expect(new Set(ids.map((id) => id.slice(-8))).size).toBeGreaterThan(ids.length * 0.99);
  });
});
