// A TCP link the campaign can cut: one process's way to the database or to the provider goes
// through a link of its own, so a partition is between that process and that server only. Cut,
// nothing passes either way (connections stay open and new ones are accepted, their bytes held, as
// packets are on a partitioned network); healed, the held bytes go on (`resume`), or every
// connection is reset (`reset`: what a partition long enough for TCP to give up leaves).
import net from 'node:net';

export interface Link {
  port: number;
  readonly cut: boolean;
  partition(): void;
  heal(how: 'resume' | 'reset'): void;
  close(): Promise<void>;
}

export async function openLink(targetHost: string, targetPort: number): Promise<Link> {
  let cut = false;
  const held: Array<() => void> = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer({ noDelay: true }, (client) => {
    const upstream = net.connect({ host: targetHost, port: targetPort, noDelay: true });
    sockets.add(client).add(upstream);
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    const forward = (from: net.Socket, to: net.Socket) =>
      from.on('data', (d) => {
        if (cut) held.push(() => to.destroyed || to.write(d));
        else to.write(d);
      });
    forward(client, upstream);
    forward(upstream, client);
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as net.AddressInfo).port,
    get cut() {
      return cut;
    },
    partition() {
      cut = true;
    },
    heal(how) {
      if (!cut) return;
      cut = false;
      const pending = held.splice(0);
      if (how === 'reset') {
        for (const s of sockets) s.destroy();
        sockets.clear();
        return;
      }
      for (const send of pending) send();
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
