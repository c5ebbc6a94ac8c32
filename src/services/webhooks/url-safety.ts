// Callback URLs are chosen by API clients, so the service must not become a proxy into its own
// network (SSRF). A URL is checked when a batch is created (clear 422) and again at every delivery,
// where the connection goes to the very address that was checked (no DNS-rebinding window).
import dns from 'node:dns';
import net from 'node:net';
import type { AppDeps } from '../../deps.ts';
import { unprocessable } from '../../errors.ts';

export const MAX_CALLBACK_URL_LENGTH = 2048;

const blocked = new net.BlockList();
for (const [net4, bits] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT (also some clouds' metadata, e.g. 100.100.100.200)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata 169.254.169.254
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(net4, bits, 'ipv4');
}
for (const [net6, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23], // IETF protocol assignments (Teredo, ORCHID, …)
  ['2001:db8::', 32],
  ['fc00::', 7], // unique local (incl. fd00:ec2::254 metadata)
  ['fe80::', 10], // link-local
  ['fec0::', 10],
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(net6, bits, 'ipv6');
}

function expandIpv6(a: string): number[] {
  // Groups as numbers; handles "::" and a dotted IPv4 tail.
  let s = a.toLowerCase().split('%')[0]!;
  const v4 = s.match(/(\d+\.\d+\.\d+\.\d+)$/);
  if (v4) {
    const p = v4[1]!.split('.').map(Number);
    s = s.slice(0, -v4[1]!.length) + `${((p[0]! << 8) | p[1]!).toString(16)}:${((p[2]! << 8) | p[3]!).toString(16)}`;
  }
  const [head, tail] = s.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : new Array(8 - h.length - t.length).fill('0');
  return [...h, ...fill, ...t].map((g) => parseInt(g, 16));
}

/** The IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4), if any. */
function embeddedIpv4(address: string): string | null {
  const g = expandIpv6(address);
  if (g.length !== 8 || g.some((x) => Number.isNaN(x))) return null;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zeros = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeros(5) && g[5] === 0xffff) return v4(g[6]!, g[7]!); // ::ffff:a.b.c.d
  if (zeros(6)) return v4(g[6]!, g[7]!); // ::a.b.c.d (deprecated compatible form)
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return v4(g[6]!, g[7]!); // NAT64
  if (g[0] === 0x2002) return v4(g[1]!, g[2]!); // 6to4
  return null;
}

/** True for loopback, private, link-local, metadata, multicast and other non-public addresses. */
export function isBlockedAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family === 6) {
    const inner = embeddedIpv4(address);
    if (inner) return blocked.check(inner, 'ipv4');
    return blocked.check(address.split('%')[0]!, 'ipv6');
  }
  return true;
}

/** Names that only ever mean "this machine" or "this private network". */
function isPrivateName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return (
    h === 'localhost' ||
    h.endsWith('.localhost') ||
    h.endsWith('.local') ||
    h.endsWith('.internal') ||
    h.endsWith('.home.arpa') ||
    h === 'metadata' ||
    !h.includes('.')
  );
}

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const WHITESPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f-\u009f]/;

export class UnsafeTargetError extends Error {
  override name = 'UnsafeTargetError';
}

interface ParsedTarget {
  url: URL;
  /** Host without IPv6 brackets. */
  host: string;
}

/** Shape checks shared by creation and delivery; throws UnsafeTargetError with a client-facing reason. */
export function parseCallbackUrl(raw: string, allowPrivate: boolean): ParsedTarget {
  if (raw.length > MAX_CALLBACK_URL_LENGTH) throw new UnsafeTargetError(`must be at most ${MAX_CALLBACK_URL_LENGTH} characters`);
  // The URL parser drops tabs and newlines and trims spaces, so the host it checks would not be
  // the text we store and later send to: refuse them instead.
  if (WHITESPACE_OR_CONTROL.test(raw)) throw new UnsafeTargetError('must not contain whitespace or control characters');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeTargetError('must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UnsafeTargetError('must use http or https');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!host) throw new UnsafeTargetError('must name a host');
  if (!allowPrivate) {
    if (net.isIP(host)) {
      if (isBlockedAddress(host)) throw new UnsafeTargetError(`must not point to a private, loopback or link-local address (${host})`);
    } else if (isPrivateName(host)) {
      throw new UnsafeTargetError(`must name a public host (${host} is local or internal)`);
    }
  }
  return { url, host };
}

export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

export const systemResolver: Resolver = (host) => dns.promises.lookup(host, { all: true, verbatim: true });

/**
 * Resolves a host and returns the addresses a delivery may connect to; refuses the host when ANY
 * of its addresses is non-public (a name mixing public and private records is an attack pattern).
 */
export async function resolveSafe(
  host: string,
  allowPrivate: boolean,
  resolver: Resolver = systemResolver,
): Promise<{ address: string; family: number }[]> {
  if (net.isIP(host)) {
    if (!allowPrivate && isBlockedAddress(host)) throw new UnsafeTargetError(`must not point to a private, loopback or link-local address (${host})`);
    return [{ address: host, family: net.isIP(host) }];
  }
  const addresses = await resolver(host);
  if (addresses.length === 0) throw new Error(`DNS lookup of ${host} returned no address`);
  if (!allowPrivate) {
    const bad = addresses.find((a) => isBlockedAddress(a.address));
    if (bad) throw new UnsafeTargetError(`must not resolve to a private, loopback or link-local address (${host} -> ${bad.address})`);
  }
  return addresses;
}

const CREATION_DNS_TIMEOUT_MS = 2000;

/**
 * Creation-time check: throws `unprocessable('callback_url …')` (a 422 `detail`). A host that does
 * not resolve right now is accepted: DNS may be briefly down, and every delivery re-checks it.
 */
export async function validateCallbackUrl(deps: Pick<AppDeps, 'config'> & { resolver?: Resolver }, raw: string): Promise<void> {
  const allowPrivate = deps.config.WEBHOOK_ALLOW_PRIVATE;
  let target: ParsedTarget;
  try {
    target = parseCallbackUrl(raw, allowPrivate);
  } catch (e) {
    throw unprocessable(`callback_url ${(e as Error).message}`);
  }
  if (!allowPrivate && !net.isIP(target.host)) {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), CREATION_DNS_TIMEOUT_MS)));
    try {
      await Promise.race([resolveSafe(target.host, false, deps.resolver), timeout]);
    } catch (e) {
      if (e instanceof UnsafeTargetError) throw unprocessable(`callback_url ${e.message}`);
      // Unresolvable right now: accepted, deliveries re-check.
    } finally {
      clearTimeout(timer);
    }
  }
}
