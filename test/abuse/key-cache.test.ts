// The per-process cache of API keys that authenticated (services/auth/key-cache.ts): how long an
// entry is trusted, that a clock stepped back or an operator's clear() ends it, that a lookup racing
// a clear() is not kept, and that its size is bounded (lru-cache: the least recently used key goes).
import { describe, expect, it } from 'vitest';
import { createKeyCache } from '../../src/services/auth/key-cache.ts';
import type { Account } from '../../src/generated/prisma/client.ts';
import { TestClock } from '../helpers/clock.ts';

const account = (id: string) => ({ id, rateLimitPerMinute: 600 }) as Account;

function setup(ttlMs = 1000, maxEntries?: number) {
  const clock = new TestClock();
  clock.set(new Date('2031-01-01T00:00:00.000Z'));
  return { clock, cache: createKeyCache({ ttlMs, clock, maxEntries }) };
}

describe('key cache', () => {
  it('answers for ttlMs from the start of the lookup that filled it, then forgets', () => {
    const { clock, cache } = setup(1000);
    const ticket = cache.begin();
    clock.advance(300); // the lookup's own time counts against the entry
    cache.set('h1', account('acc_1'), ticket);
    expect(cache.get('h1')?.id).toBe('acc_1');
    clock.advance(699);
    expect(cache.get('h1')?.id).toBe('acc_1');
    clock.advance(1);
    expect(cache.get('h1')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('keeps nothing with ttlMs 0', () => {
    const { cache } = setup(0);
    cache.set('h1', account('acc_1'), cache.begin());
    expect(cache.get('h1')).toBeUndefined();
  });

  it('a clock stepped back does not stretch an entry', () => {
    const { clock, cache } = setup(1000);
    cache.set('h1', account('acc_1'), cache.begin());
    clock.advance(-60_000);
    expect(cache.get('h1')).toBeUndefined();
  });

  it('clear() forgets every key, and a lookup that started before it is not kept', () => {
    const { cache } = setup(1000);
    cache.set('h1', account('acc_1'), cache.begin());
    const racing = cache.begin();
    cache.clear();
    expect(cache.get('h1')).toBeUndefined();
    cache.set('h2', account('acc_2'), racing);
    expect(cache.get('h2')).toBeUndefined();
    cache.set('h2', account('acc_2'), cache.begin());
    expect(cache.get('h2')?.id).toBe('acc_2');
  });

  it('hands out a frozen copy, so no request can change what the next one sees', () => {
    const { cache } = setup(1000);
    const original = account('acc_1');
    cache.set('h1', original, cache.begin());
    const cached = cache.get('h1')!;
    expect(Object.isFrozen(cached)).toBe(true);
    expect(() => {
      (cached as { rateLimitPerMinute: number }).rateLimitPerMinute = 1;
    }).toThrow(TypeError);
    expect(Object.isFrozen(original)).toBe(false);
  });

  it('holds at most maxEntries, dropping the least recently used key (not every client at once)', () => {
    const { clock, cache } = setup(1000, 3);
    for (const h of ['a', 'b']) cache.set(h, account(h), cache.begin());
    clock.advance(1000);
    cache.set('c', account('c'), cache.begin());
    expect(cache.size).toBe(3); // a and b expired, held until room is needed
    cache.set('d', account('d'), cache.begin());
    expect(cache.size).toBe(3); // a, the least recently used, dropped to make room
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')).toBeUndefined(); // expired: never answered, and forgotten on the way
    expect(cache.size).toBe(2);
    cache.set('e', account('e'), cache.begin());
    expect(['c', 'd', 'e'].map((h) => cache.get(h)?.id)).toEqual(['c', 'd', 'e']);
    expect(cache.get('c')?.id).toBe('c'); // d is now the least recently used
    cache.set('f', account('f'), cache.begin());
    expect(cache.size).toBe(3);
    expect(['c', 'd', 'e', 'f'].map((h) => cache.get(h)?.id)).toEqual(['c', undefined, 'e', 'f']);
    for (let i = 0; i < 1000; i++) cache.set(`k${i}`, account(`k${i}`), cache.begin());
    expect(cache.size).toBe(3);
  });
});
