import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { generateSecret, sign, signedHeaders } from '../../src/services/webhooks/signing.ts';
import { verifyWebhook, WebhookVerificationError } from '../../src/services/webhooks/verify.ts';
import { openSecret, sealSecret } from '../../src/services/webhooks/secrets.ts';

const body = JSON.stringify({ id: 'msg_1', type: 'batch.started', created_at: '2030-01-01T00:00:00.000Z', data: { batch_id: 'sched_1' } });

describe('Standard Webhooks signing', () => {
  it('produces headers the reference library (standardwebhooks) verifies', () => {
    const secret = generateSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const headers = signedHeaders([secret], 'msg_abc', new Date(), body);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
  });

  it('matches the reference signature byte for byte', () => {
    const secret = generateSecret();
    const at = new Date('2031-05-06T07:08:09.500Z');
    expect(sign(secret, 'msg_x', Math.floor(at.getTime() / 1000), body)).toBe(new Webhook(secret).sign('msg_x', at, body));
  });

  it('sends one signature per secret; the reference library accepts either secret', () => {
    const [a, b] = [generateSecret(), generateSecret()];
    const headers = signedHeaders([a, b], 'msg_rot', new Date(), body);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(a).verify(body, { ...headers })).toBeTruthy();
    expect(new Webhook(b).verify(body, { ...headers })).toBeTruthy();
    expect(() => new Webhook(generateSecret()).verify(body, { ...headers })).toThrow();
  });

  it('verify.ts accepts what the reference library signs and rejects tampering, wrong keys and old timestamps', () => {
    const secret = generateSecret();
    const now = new Date();
    const ref = new Webhook(secret);
    const headers = {
      'webhook-id': 'msg_v',
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': ref.sign('msg_v', now, body),
    };
    expect(verifyWebhook(secret, headers, body)).toEqual(JSON.parse(body));
    expect(verifyWebhook([generateSecret(), secret], new Headers(headers), Buffer.from(body))).toEqual(JSON.parse(body));
    expect(() => verifyWebhook(secret, headers, body.replace('started', 'stopped'))).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(generateSecret(), headers, body)).toThrow(/No matching signature/);
    expect(() => verifyWebhook(secret, headers, body, { now: new Date(now.getTime() + 10 * 60_000) })).toThrow(/tolerance/);
    expect(() => verifyWebhook(secret, { 'webhook-id': 'x' }, body)).toThrow(/Missing/);
  });

  it('stores secrets sealed with the app secret', () => {
    const secret = generateSecret();
    const sealed = sealSecret('app-secret-one-0123456789abcdef0123', secret);
    expect(sealed).not.toContain(secret.slice(6));
    expect(openSecret('app-secret-one-0123456789abcdef0123', sealed)).toBe(secret);
    expect(() => openSecret('another-app-secret-0123456789abcdef', sealed)).toThrow(/APP_SECRET/);
    expect(openSecret('whatever', secret)).toBe(secret);
  });
});
