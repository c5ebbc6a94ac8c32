// A server proves it holds the operator token without showing it: the CLI sends a fresh random
// challenge, the server answers HMAC-SHA256 keyed by its token over the challenge, and the CLI,
// which computes the same from the token file, sends the token only on a match. The port a stale
// token file points at may now be anyone's.
import crypto from 'node:crypto';

export const OPERATOR_PROOF_PATH = '/operator/proof';

// Keeps these MACs apart from any other use of the token.
const DOMAIN = 'call-batch-service operator-token proof v1\n';

/** 22-128 base64url characters: at least 128 random bits, and a bounded input. */
export const CHALLENGE_PATTERN = /^[A-Za-z0-9_-]{22,128}$/;

export const newChallenge = (): string => crypto.randomBytes(24).toString('base64url');

export function operatorProof(token: string, challenge: string): string {
  return crypto
    .createHmac('sha256', token)
    .update(DOMAIN + challenge)
    .digest('base64url');
}

/** Whether `answer` is the proof of `token` for `challenge` (constant time). */
export function provesToken(token: string, challenge: string, answer: unknown): boolean {
  if (typeof answer !== 'string') return false;
  const expected = Buffer.from(operatorProof(token, challenge));
  const got = Buffer.from(answer);
  return got.length === expected.length && crypto.timingSafeEqual(got, expected);
}
