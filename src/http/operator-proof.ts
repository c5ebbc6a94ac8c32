// GET /operator/proof?challenge=…: the embedded start's answer to the CLI's question "did you
// write this token file?" (services/auth/operator-proof.ts). No authentication: the answer is a
// MAC that tells nothing of the token. Served only by a process that wrote a token file.
import { CHALLENGE_PATTERN, operatorProof } from '../services/auth/operator-proof.ts';
import { json } from './responses.ts';

export function serveOperatorProof(token: string | undefined, request: Request, url: URL): Response {
  if (!token) return json(404, { detail: 'Not Found' });
  if (request.method !== 'GET') return json(405, { detail: 'Method Not Allowed' });
  const challenge = url.searchParams.get('challenge') ?? '';
  if (!CHALLENGE_PATTERN.test(challenge)) return json(400, { detail: 'challenge must be 22 to 128 base64url characters' });
  return json(200, { proof: operatorProof(token, challenge) }, { 'cache-control': 'no-store' });
}
