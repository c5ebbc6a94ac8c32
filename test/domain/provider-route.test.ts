// Provider routes: the order a dial tries them in, and what an operator's route may hold.
import { describe, expect, it } from 'vitest';
import { dialOrder, MAX_ROUTE_PROVIDERS, routeFaults } from '../../src/domain/provider-route.ts';

describe('dial order', () => {
  it('equal weights: the listed order, whatever the draw', () => {
    const route = [
      { provider: 'a', weight: 1 },
      { provider: 'b', weight: 1 },
    ];
    expect(dialOrder(route, 0.99)).toEqual(['a', 'b']);
  });

  it('weights pick the first provider by share; the rest follow in listed order', () => {
    const route = [
      { provider: 'a', weight: 3 },
      { provider: 'b', weight: 1 },
      { provider: 'c', weight: 0 },
    ];
    expect(dialOrder(route, 0)).toEqual(['a', 'b', 'c']);
    expect(dialOrder(route, 0.74)).toEqual(['a', 'b', 'c']);
    expect(dialOrder(route, 0.75)).toEqual(['b', 'a', 'c']);
    expect(dialOrder(route, 0.999)).toEqual(['b', 'a', 'c']);
    // A weight-0 entry is never drawn first.
    const firsts = new Set(Array.from({ length: 100 }, (_, i) => dialOrder(route, i / 100)[0]));
    expect([...firsts].sort()).toEqual(['a', 'b']);
  });
});

describe('route faults', () => {
  const known = ['simulator', 'retell'];
  it('accepts a good route', () => {
    expect(
      routeFaults(
        [
          { provider: 'retell', weight: 2 },
          { provider: 'simulator', weight: 0 },
        ],
        known,
      ),
    ).toEqual([]);
  });
  it('refuses unknown, repeated, badly weighted, empty and too long routes', () => {
    expect(routeFaults([{ provider: 'nope', weight: 1 }], known)[0]).toMatch(/providers\[0\]\.provider/);
    expect(
      routeFaults(
        [
          { provider: 'retell', weight: 1 },
          { provider: 'retell', weight: 1 },
        ],
        known,
      ),
    ).toEqual(["providers[1].provider: 'retell' is listed twice"]);
    expect(routeFaults([{ provider: 'retell', weight: 1.5 }], known)[0]).toMatch(/weight/);
    expect(routeFaults([{ provider: 'retell', weight: 0 }], known)).toEqual(['providers: at least one weight should be above 0']);
    expect(routeFaults([], known)).toHaveLength(1);
    expect(
      routeFaults(
        Array.from({ length: MAX_ROUTE_PROVIDERS + 1 }, () => ({ provider: 'retell', weight: 1 })),
        known,
      )[0],
    ).toMatch(/1 to/);
  });
});
