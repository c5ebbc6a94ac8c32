// A TCP forwarder, run as its own process: `tcp-forwarder.ts LISTEN_HOST LISTEN_PORT TARGET_HOST TARGET_PORT`
// pipes every connection to the target. It prints `listening <port>` once bound (LISTEN_PORT 0: any
// free port) and exits when its stdin ends (the test that started it is gone). Tests use it to make
// a server that listens on loopback only (the local PostgreSQL) reachable from test hosts, without
// reconfiguring that server.
import net from 'node:net';

const [listenHost, listenPort, targetHost, targetPort] = process.argv.slice(2);
if (!listenHost || !listenPort || !targetHost || !targetPort) {
  process.stderr.write('usage: tcp-forwarder.ts LISTEN_HOST LISTEN_PORT TARGET_HOST TARGET_PORT\n');
  process.exit(64);
}

// No Nagle: database round trips are small writes answered at once.
const server = net.createServer({ noDelay: true }, (client) => {
  const upstream = net.connect({ host: targetHost, port: Number(targetPort), noDelay: true });
  const close = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', close).on('close', close);
  upstream.on('error', close).on('close', close);
  client.pipe(upstream).pipe(client);
});
server.listen(Number(listenPort), listenHost, () => {
  process.stdout.write(`listening ${(server.address() as net.AddressInfo).port}\n`);
});
server.on('error', (e) => {
  process.stderr.write(`${e.message}\n`);
  process.exit(1);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
