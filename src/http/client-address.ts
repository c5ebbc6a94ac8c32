import type { IncomingMessage } from 'node:http';
import net from 'node:net';

/**
 * The socket's address, or with `trustProxy` (exactly one reverse proxy in front) the last
 * X-Forwarded-For entry, which that proxy wrote; earlier entries are client-controlled.
 */
export function nodeClientAddress(req: IncomingMessage | undefined, trustProxy: boolean): string | undefined {
  if (!req) return undefined;
  if (trustProxy) {
    const forwarded = req.headers['x-forwarded-for'];
    const last = (Array.isArray(forwarded) ? forwarded.join(',') : (forwarded ?? '')).split(',').pop()?.trim();
    if (last && net.isIP(last)) return normalizeAddress(last);
  }
  const remote = req.socket?.remoteAddress;
  return remote ? normalizeAddress(remote) : undefined;
}

/**
 * IPv4-mapped IPv6 becomes plain IPv4; other IPv6 addresses are reduced to their /64, the unit a
 * single client usually controls, so rotating within it does not buy a fresh budget.
 */
export function normalizeAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (net.isIPv6(address)) return `${expandIpv6(address).slice(0, 4).join(':')}::/64`;
  return address;
}

function expandIpv6(address: string): string[] {
  const [head, tail = ''] = address.split('%')[0].split('::');
  const left = head ? head.split(':') : [];
  const right = address.includes('::') && tail ? tail.split(':') : [];
  const missing = 8 - left.length - right.length;
  const groups = address.includes('::') ? [...left, ...Array(Math.max(0, missing)).fill('0'), ...right] : left;
  return groups.map((g) => (g.includes('.') ? g : g.toLowerCase().replace(/^0+(?=.)/, '')));
}
