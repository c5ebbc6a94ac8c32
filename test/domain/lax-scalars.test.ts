import { describe, expect, it } from 'vitest';
import { laxBoolean, laxInteger } from '../../src/domain/lax-scalars.ts';

describe('laxBoolean (pydantic lax bool)', () => {
  it('reads booleans, 0/1 and the documented words in any case', () => {
    expect(laxBoolean(true)).toEqual({ ok: true, value: true });
    expect(laxBoolean(1.0)).toEqual({ ok: true, value: true });
    expect(laxBoolean('Yes')).toEqual({ ok: true, value: true });
    expect(laxBoolean('OFF')).toEqual({ ok: true, value: false });
  });
  it('refuses other values with the reason pydantic gives', () => {
    expect(laxBoolean('2')).toEqual({ ok: false, reason: 'Input should be a valid boolean, unable to interpret input' });
    expect(laxBoolean(0.5)).toEqual({ ok: false, reason: 'Input should be a valid boolean, unable to interpret input' });
    expect(laxBoolean(null)).toEqual({ ok: false, reason: 'Input should be a valid boolean' });
    expect(laxBoolean({})).toEqual({ ok: false, reason: 'Input should be a valid boolean' });
  });
});

describe('laxInteger (pydantic lax int)', () => {
  it('reads integers, whole floats, digit strings and booleans', () => {
    expect(laxInteger(3)).toEqual({ ok: true, value: 3 });
    expect(laxInteger(3.0)).toEqual({ ok: true, value: 3 });
    expect(laxInteger(' -12 ')).toEqual({ ok: true, value: -12 });
    expect(laxInteger('+4')).toEqual({ ok: true, value: 4 });
    expect(laxInteger(false)).toEqual({ ok: true, value: 0 });
  });
  it('refuses other values with the reason pydantic gives', () => {
    expect(laxInteger('1e3')).toEqual({ ok: false, reason: 'Input should be a valid integer, unable to parse string as an integer' });
    expect(laxInteger('')).toEqual({ ok: false, reason: 'Input should be a valid integer, unable to parse string as an integer' });
    expect(laxInteger(1.5)).toEqual({ ok: false, reason: 'Input should be a valid integer, got a number with a fractional part' });
    expect(laxInteger(Infinity)).toEqual({ ok: false, reason: 'Input should be a valid integer' });
    expect(laxInteger(null)).toEqual({ ok: false, reason: 'Input should be a valid integer' });
  });
});
