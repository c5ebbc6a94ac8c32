// How a WebSocket operation writes its live values (graphql/ws.ts operationWriter): at once while
// the peer reads, with a promise only while the socket has bytes it could not send yet, settled
// once they are sent, or false once the socket is gone.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { operationWriter } from '../../src/graphql/ws.ts';
import { waitFor } from '../helpers/wait.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** A server-side socket whose peer is a bare TCP client that can stop reading. */
async function socketPair(): Promise<{ server: WebSocket; peer: net.Socket; received: () => number }> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  cleanups.push(() => wss.close());
  await new Promise((resolve) => wss.once('listening', resolve));
  const { port } = wss.address() as net.AddressInfo;
  const accepted = new Promise<WebSocket>((resolve) => wss.once('connection', resolve));
  const peer = net.connect(port, '127.0.0.1');
  cleanups.push(() => peer.destroy());
  let bytes = 0;
  peer.on('data', (chunk) => (bytes += chunk.length));
  peer.write(
    'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
  );
  return { server: await accepted, peer, received: () => bytes };
}

describe('a WebSocket operation writing its values', () => {
  it('takes each message at once while the peer reads', async () => {
    const { server, received } = await socketPair();
    const write = operationWriter(server);
    for (let i = 0; i < 100; i++) expect(write(`{"n":${i}}`)).toBe(true);
    await waitFor(() => received() > 100 * 8);
  });

  it('gives a promise while the peer does not read, settled true once it read everything', async () => {
    const { server, peer, received } = await socketPair();
    await waitFor(() => received() > 0); // the handshake's answer
    peer.pause();
    const write = operationWriter(server);
    const big = `"${'x'.repeat(256 * 1024)}"`;
    let answer: boolean | Promise<boolean> = true;
    let sent = 0;
    // The kernel's buffers take some of it; then the socket holds the rest.
    while (answer === true && sent < 1_000) {
      answer = write(big);
      sent++;
    }
    expect(answer).toBeInstanceOf(Promise);
    let settled: boolean | undefined;
    void (answer as Promise<boolean>).then((ok) => (settled = ok));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(settled).toBeUndefined();
    peer.resume();
    await waitFor(() => settled !== undefined);
    expect(settled).toBe(true);
    await waitFor(() => received() >= sent * big.length);
  });

  it('answers false once the socket is gone, and settles a waiting write false', async () => {
    const { server, peer, received } = await socketPair();
    await waitFor(() => received() > 0);
    peer.pause();
    const write = operationWriter(server);
    const big = `"${'x'.repeat(256 * 1024)}"`;
    let answer: boolean | Promise<boolean> = true;
    for (let sent = 0; answer === true && sent < 1_000; sent++) answer = write(big);
    expect(answer).toBeInstanceOf(Promise);
    server.terminate();
    expect(await answer).toBe(false);
    expect(write('{}')).toBe(false);
  });
});
