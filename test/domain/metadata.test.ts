import { describe, expect, it } from 'vitest';
import { exceedsDepth, normalizeMetadata, normalizeMetadataKey, sanitizedJson, sanitizeJson } from '../../src/domain/metadata.ts';

function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: 1 };
  for (let i = 1; i < levels; i++) value = { child: value };
  return value;
}

describe('normalizeMetadataKey', () => {
  it.each(['Phone Number', 'phone_number', 'phoneNumber', 'PHONE-NUMBER', 'PhoneNumber', ' phone  number ', 'phone.number'])(
    '%j -> phone_number',
    (key) => {
      expect(normalizeMetadataKey(key)).toBe('phone_number');
    },
  );

  it('splits acronyms and digits sensibly', () => {
    expect(normalizeMetadataKey('XMLHttpRequest')).toBe('xml_http_request');
    expect(normalizeMetadataKey('userID')).toBe('user_id');
    expect(normalizeMetadataKey('Address 2')).toBe('address_2');
    expect(normalizeMetadataKey('altPhone2Number')).toBe('alt_phone2_number');
  });

  it('keeps non-ASCII letters', () => {
    expect(normalizeMetadataKey('Prénom Client')).toBe('prénom_client');
  });

  it('keeps keys without any letter or digit verbatim instead of collapsing them', () => {
    expect(normalizeMetadataKey('')).toBe('');
    expect(normalizeMetadataKey('--')).toBe('--');
  });
});

describe('normalizeMetadata', () => {
  it('normalises top-level keys only, first duplicate wins', () => {
    const result = normalizeMetadata({
      'Phone Number': 'first',
      phoneNumber: 'second',
      PHONE_NUMBER: 'third',
      Details: { innerKey: 1 },
    });
    expect(result).toEqual({ phone_number: 'first', details: { innerKey: 1 } });
  });

  it('keeps the order of first occurrence', () => {
    expect(Object.keys(normalizeMetadata({ B: 1, a: 2, b: 3 }))).toEqual(['b', 'a']);
  });

  it('drops prototype-polluting keys, also when they only appear after normalisation', () => {
    const hostile = JSON.parse('{"__proto__": {"polluted": true}, "constructor": 1, "Prototype": 2, "CONSTRUCTOR": 3, "ok": 4}') as Record<
      string,
      unknown
    >;
    const result = normalizeMetadata(hostile);
    expect(Object.keys(result)).toEqual(['ok']);
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('drops forbidden keys at every depth, inside arrays too', () => {
    const hostile = JSON.parse('{"a": {"__proto__": {"x": 1}, "b": [{"constructor": {"prototype": 1}, "keep": true}], "prototype": 0}}') as Record<
      string,
      unknown
    >;
    const result = normalizeMetadata(hostile);
    expect(result).toEqual({ a: { b: [{ keep: true }] } });
    const a = result.a as Record<string, unknown>;
    expect(Object.getPrototypeOf(a)).toBe(Object.prototype);
    expect(Object.hasOwn(a, '__proto__')).toBe(false);
  });

  it('returns a copy, so later edits to the input do not leak', () => {
    const input = { Tags: ['x'], info: { y: 1 } };
    const result = normalizeMetadata(input);
    input.Tags.push('z');
    input.info.y = 2;
    expect(result).toEqual({ tags: ['x'], info: { y: 1 } });
  });
});

describe('sanitizedJson', () => {
  it('hands back the value itself when no key at any depth is forbidden', () => {
    const clean = { a: 1, b: [{ c: 'x' }, [{ d: null }]], e: { f: { g: true } } };
    expect(sanitizedJson(clean)).toBe(clean);
  });

  it('copies without the forbidden keys when one is nested anywhere', () => {
    const hostile = JSON.parse('{"a": 1, "b": [{"c": {"__proto__": {"polluted": true}, "ok": 2}}]}');
    const out = sanitizedJson(hostile) as { b: Array<{ c: Record<string, unknown> }> };
    expect(out).not.toBe(hostile);
    expect(Object.hasOwn(out.b[0].c, '__proto__')).toBe(false);
    expect(out.b[0].c.ok).toBe(2);
  });
});

describe('sanitizeJson', () => {
  it('passes scalars and null through', () => {
    expect(sanitizeJson(5)).toBe(5);
    expect(sanitizeJson(null)).toBeNull();
    expect(sanitizeJson('s')).toBe('s');
  });

  it('survives nesting far deeper than the stack would allow recursively', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(() => sanitizeJson(deep)).not.toThrow();
  });
});

describe('exceedsDepth', () => {
  it('allows 8 levels and rejects 9 (the object itself is level 1)', () => {
    expect(exceedsDepth(nested(8), 8)).toBe(false);
    expect(exceedsDepth(nested(9), 8)).toBe(true);
  });

  it('counts arrays as levels', () => {
    expect(exceedsDepth({ a: [[[[[[[1]]]]]]] }, 8)).toBe(false); // object + 7 arrays
    expect(exceedsDepth({ a: [[[[[[[[1]]]]]]]] }, 8)).toBe(true); // object + 8 arrays
  });

  it('does not blow the stack on hostile nesting', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = { d: deep };
    expect(exceedsDepth(deep, 8)).toBe(true);
  });
});
