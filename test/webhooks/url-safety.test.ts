import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { AppError } from '../../src/errors.ts';
import { isBlockedAddress, parseCallbackUrl, validateCallbackUrl, type Resolver } from '../../src/services/webhooks/url-safety.ts';

const strict = { config: loadConfig({}) };
const lenient = { config: loadConfig({ WEBHOOK_ALLOW_PRIVATE: 'true' }) };
const resolvesTo =
  (...addresses: string[]): Resolver =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

async function detail(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    expect((e as AppError).code).toBe('UNPROCESSABLE');
    return (e as AppError).message;
  }
  throw new Error('expected a 422');
}

describe('callback URL safety', () => {
  it('classifies addresses', () => {
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.100.100.200',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fd00:ec2::254',
      'fc00::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:10.0.0.1',
      '64:ff9b::a9fe:a9fe',
      '2002:c0a8:0101::1',
      'ff02::1',
    ]) {
      expect(isBlockedAddress(a), a).toBe(true);
    }
    for (const a of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:2800:220:1:248:1893:25c8:1946', '::ffff:8.8.8.8']) {
      expect(isBlockedAddress(a), a).toBe(false);
    }
  });

  it('accepts only absolute http(s) URLs', () => {
    expect(() => parseCallbackUrl('ftp://example.com/x', true)).toThrow(/http or https/);
    expect(() => parseCallbackUrl('not-a-url', true)).toThrow(/absolute/);
    expect(() => parseCallbackUrl('https://a.example/\nb', true)).toThrow(/whitespace or control characters/);
    expect(() => parseCallbackUrl('https://' + 'a'.repeat(2100) + '.com', true)).toThrow(/2048/);
    expect(parseCallbackUrl('https://hooks.example.com/in?x=1', false).host).toBe('hooks.example.com');
  });

  it('refuses private targets at creation with a clear 422 detail', async () => {
    expect(await detail(validateCallbackUrl(strict, 'http://127.0.0.1:8080/hook'))).toBe(
      'callback_url must not point to a private, loopback or link-local address (127.0.0.1)',
    );
    expect(await detail(validateCallbackUrl(strict, 'http://[::1]/hook'))).toMatch(/^callback_url must not point to a private/);
    expect(await detail(validateCallbackUrl(strict, 'http://169.254.169.254/latest/meta-data'))).toMatch(/169\.254\.169\.254/);
    expect(await detail(validateCallbackUrl(strict, 'http://localhost:3000/hook'))).toBe(
      'callback_url must name a public host (localhost is local or internal)',
    );
    expect(await detail(validateCallbackUrl(strict, 'http://metadata.google.internal/x'))).toMatch(/internal/);
    expect(await detail(validateCallbackUrl(strict, 'gopher://example.com'))).toBe('callback_url must use http or https');
    expect(
      await detail(validateCallbackUrl({ ...strict, resolver: resolvesTo('93.184.216.34', '10.0.0.5') }, 'https://mixed.example.com/hook')),
    ).toBe('callback_url must not resolve to a private, loopback or link-local address (mixed.example.com -> 10.0.0.5)');
  });

  it('accepts public targets, unresolvable names (deliveries re-check) and, when allowed, private ones', async () => {
    await expect(validateCallbackUrl({ ...strict, resolver: resolvesTo('93.184.216.34') }, 'https://hooks.example.com/in')).resolves.toBeUndefined();
    const nxdomain: Resolver = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    await expect(validateCallbackUrl({ ...strict, resolver: nxdomain }, 'https://nowhere.example.com/in')).resolves.toBeUndefined();
    await expect(validateCallbackUrl(lenient, 'http://127.0.0.1:9999/hook')).resolves.toBeUndefined();
    await expect(detail(validateCallbackUrl(lenient, 'file:///etc/passwd'))).resolves.toMatch(/http or https/);
  });
});
