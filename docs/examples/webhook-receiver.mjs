// A webhook receiver with nothing but Node (18 or later): it checks each delivery's Standard Webhooks
// signature, drops events it has already handled and prints every new event as one JSON line.
//   WEBHOOK_SECRET='whsec_…' PORT=4000 node webhook-receiver.mjs
// WEBHOOK_SECRET may hold two secrets separated by a space while you roll out a rotation.
import crypto from 'node:crypto';
import http from 'node:http';

const KEYS = (process.env.WEBHOOK_SECRET ?? '')
  .split(' ')
  .filter(Boolean)
  .map((secret) => Buffer.from(secret.replace(/^whsec_/, ''), 'base64'));
if (KEYS.length === 0 || KEYS.some((key) => key.length === 0)) throw new Error('Set WEBHOOK_SECRET to the whsec_… secret');
const TOLERANCE_SECONDS = 5 * 60; // replay protection: refuse attempts signed longer ago (or ahead)
const MAX_BODY_BYTES = 1024 * 1024; // one event is well under this
const MAX_REMEMBERED = 100_000; // in production, keep the handled ids in your database
const handled = new Set();

/** Whether one of the `v1,` signatures is the HMAC of "{id}.{timestamp}.{raw body}" with a key. */
function signedByUs(id, timestamp, signatures, body) {
  const offered = signatures
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => Buffer.from(s.slice(3)));
  const content = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), body]);
  return KEYS.some((key) => {
    const expected = Buffer.from(crypto.createHmac('sha256', key).update(content).digest('base64'));
    return offered.some((s) => s.length === expected.length && crypto.timingSafeEqual(s, expected));
  });
}

/** The raw body (verify these exact bytes, not re-serialised JSON), or null when it is too large. */
async function rawBody(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

async function receive(req, res) {
  const answer = (status, note) => {
    res.writeHead(status, { 'content-type': 'text/plain' }).end(note);
    if (status >= 300) console.error(`${status} ${note}`);
  };
  const { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signatures } = req.headers;
  if (req.method !== 'POST') return answer(405, 'POST only');
  if (!id || !timestamp || !signatures) return answer(400, 'missing webhook-id, webhook-timestamp or webhook-signature');
  // Cheap checks first: a stale timestamp or an oversized body is refused before the body is read.
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > TOLERANCE_SECONDS) {
    return answer(401, 'webhook-timestamp is outside the tolerance window');
  }
  if (Number(req.headers['content-length']) > MAX_BODY_BYTES) return answer(413, 'body too large');
  const body = await rawBody(req);
  if (body === null) return answer(413, 'body too large');
  if (!signedByUs(id, timestamp, signatures, body)) return answer(401, 'no matching signature');
  // At least once: the same event (same webhook-id) can arrive again; acknowledge it, do nothing.
  if (handled.has(id)) {
    console.error(`duplicate ${id}`);
    return answer(204, '');
  }
  handled.add(id);
  if (handled.size > MAX_REMEMBERED) handled.delete(handled.values().next().value);
  console.log(JSON.stringify(JSON.parse(body.toString('utf8')))); // your work goes here, or on a queue
  answer(204, ''); // answer within WEBHOOK_TIMEOUT_MS (10 s), or the event is sent again
}

const server = http.createServer((req, res) => {
  receive(req, res).catch((error) => {
    console.error(error);
    if (!res.headersSent) res.writeHead(500).end();
  });
});
server.listen(Number(process.env.PORT ?? 4000), process.env.HOST ?? '127.0.0.1', () => {
  const { address, port } = server.address();
  console.error(`listening on http://${address}:${port}`);
});
