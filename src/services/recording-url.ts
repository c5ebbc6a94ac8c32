import crypto from 'node:crypto';
import type { AppDeps } from '../deps.ts';

/** How long a handed-out recording link stays valid. */
export const RECORDING_URL_TTL_SECONDS = 3600;

function signature(secret: string, callId: string, expires: number): string {
  return crypto.createHmac('sha256', secret).update(`recording:${callId}:${expires}`).digest('base64url');
}

export function baseUrl(deps: Pick<AppDeps, 'config'>): string {
  const { PUBLIC_URL, HOST, PORT } = deps.config;
  return (PUBLIC_URL ?? `http://${HOST}:${PORT}`).replace(/\/+$/, '');
}

export function recordingUrl(
  deps: Pick<AppDeps, 'config' | 'appSecret' | 'clock'>,
  callId: string,
  /** Links handed to webhook receivers live longer (src/services/webhooks/payload-links.ts). */
  ttlSeconds: number = RECORDING_URL_TTL_SECONDS,
): string {
  // Rounded to the minute so repeated reads inside a minute return the same URL (cache friendly).
  const expires = Math.ceil(deps.clock.now().getTime() / 60_000) * 60 + ttlSeconds;
  return `${baseUrl(deps)}/recordings/${callId}.wav?expires=${expires}&signature=${signature(deps.appSecret, callId, expires)}`;
}

/** A call's recording link, or null when it has no recording. */
export function recordingUrlOf(
  deps: Pick<AppDeps, 'config' | 'appSecret' | 'clock'>,
  call: { id: string; recordingAvailable: boolean | null },
): string | null {
  return call.recordingAvailable ? recordingUrl(deps, call.id) : null;
}

export function verifyRecordingSignature(
  deps: Pick<AppDeps, 'appSecret' | 'clock'>,
  callId: string,
  expires: string | null,
  sig: string | null,
): boolean {
  const exp = Number(expires);
  if (!sig || !Number.isInteger(exp) || exp * 1000 < deps.clock.now().getTime()) return false;
  const expected = Buffer.from(signature(deps.appSecret, callId, exp));
  const given = Buffer.from(sig);
  return expected.length === given.length && crypto.timingSafeEqual(expected, given);
}
