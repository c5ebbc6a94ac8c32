// Request bodies this process holds at once, and who holds them. A body counts from its first byte
// until its response is ready (the parsed JSON lives that long too), byte by byte as it arrives:
// a declared Content-Length reserves nothing, so a client that declares much and sends little holds
// little. Each sender has a share: an account (a key that authenticated before its body was read)
// at most `perAccount` (one full MAX_BODY_BYTES body always fits); senders without one at most
// `perAddress` per client address and `anonymous` together. Past a share the body gets 429; past the
// process's budget, 503. Both carry Retry-After and refuse instead of taking the heap.
import type { Config } from '../config.ts';
import { AppError } from '../errors.ts';

export interface BodyShares {
  /** Every body held at once. */
  total: number;
  /** One account's bodies. */
  perAccount: number;
  /** Bodies of senders with no key that authenticated, together. */
  anonymous: number;
  /** Bodies of such senders from one client address. */
  perAddress: number;
}

/** How fast a body must keep arriving (src/http/body.ts cuts one that falls behind with 408). */
export interface BodyPace {
  /** Each window of this length must bring `minBytesPerSecond` × its length (or the rest of a declared body). */
  windowMs: number;
  minBytesPerSecond: number;
}

/** Whose body it is: read when its first byte arrives, so a key may authenticate after the lease opens. */
export interface BodyParty {
  readonly clientAddress: string | undefined;
  /** The account whose key authenticated (or the operator's stand-in); unset: an anonymous sender. */
  readonly accountId?: string | undefined;
}

export interface BodyLease {
  /** Counts `bytes` more of this request's body; throws 429 past the sender's share, 503 past the budget. */
  take(bytes: number): void;
  release(): void;
  readonly pace: BodyPace;
}

export interface BodyBudget {
  /** A lease for one request's body; without a party the sender is anonymous, in-process. */
  open(party?: BodyParty): BodyLease;
  /** Bytes held now by every sender. */
  held(): number;
  readonly shares: BodyShares;
}

type BodyConfig = Pick<
  Config,
  | 'MAX_BODY_BYTES'
  | 'MAX_BODY_BYTES_IN_FLIGHT'
  | 'MAX_BODY_BYTES_IN_FLIGHT_PER_ACCOUNT'
  | 'MAX_BODY_BYTES_IN_FLIGHT_ANONYMOUS'
  | 'MAX_BODY_BYTES_IN_FLIGHT_PER_ADDRESS'
  | 'BODY_MIN_BYTES_PER_SECOND'
  | 'BODY_PACE_WINDOW_MS'
>;

/** The process's budget as configured: one full MAX_BODY_BYTES body always fits the budget and an account's share. */
export function configuredBodyBudget(config: BodyConfig): BodyBudget {
  const max = config.MAX_BODY_BYTES;
  return createBodyBudget(
    {
      total: Math.max(config.MAX_BODY_BYTES_IN_FLIGHT, max),
      perAccount: Math.max(config.MAX_BODY_BYTES_IN_FLIGHT_PER_ACCOUNT ?? max, max),
      anonymous: config.MAX_BODY_BYTES_IN_FLIGHT_ANONYMOUS,
      perAddress: Math.min(config.MAX_BODY_BYTES_IN_FLIGHT_PER_ADDRESS, config.MAX_BODY_BYTES_IN_FLIGHT_ANONYMOUS),
    },
    { windowMs: config.BODY_PACE_WINDOW_MS, minBytesPerSecond: config.BODY_MIN_BYTES_PER_SECOND },
  );
}

/** Stands for the admin token as a sender, so operators keep a share of their own under attack. */
export const OPERATOR_PARTY = '(operator)';

const RETRY_AFTER = { 'Retry-After': '1' };

const overShare = () => new AppError('RATE_LIMITED', 'Too many request bodies at once from this client; retry shortly', [], RETRY_AFTER);
const busy = (whose: string) =>
  new AppError('UNAVAILABLE', `The server is receiving too many request bodies${whose} at once; retry shortly`, [], RETRY_AFTER);

const DEFAULT_PACE: BodyPace = { windowMs: 5_000, minBytesPerSecond: 16 * 1024 };

/** `total` alone: one budget with no shares (every sender may take all of it). */
export function createBodyBudget(limits: BodyShares | number, pace: BodyPace = DEFAULT_PACE): BodyBudget {
  const shares = typeof limits === 'number' ? { total: limits, perAccount: limits, anonymous: limits, perAddress: limits } : limits;
  let used = 0;
  let anonymousUsed = 0;
  // Only senders holding bytes now: entries leave when they reach zero.
  const bySender = new Map<string, number>();
  const add = (sender: string, bytes: number) => {
    const n = (bySender.get(sender) ?? 0) + bytes;
    if (n > 0) bySender.set(sender, n);
    else bySender.delete(sender);
  };
  return {
    shares,
    held: () => used,
    open(party) {
      let held = 0;
      let sender: string | undefined;
      let anonymous = true;
      return {
        pace,
        take(bytes) {
          if (sender === undefined) {
            anonymous = !party?.accountId;
            sender = anonymous ? `address:${party?.clientAddress ?? 'in-process'}` : `account:${party!.accountId}`;
          }
          if ((bySender.get(sender) ?? 0) + bytes > (anonymous ? shares.perAddress : shares.perAccount)) throw overShare();
          if (anonymous && anonymousUsed + bytes > shares.anonymous) throw busy(' from clients without a key');
          if (used + bytes > shares.total) throw busy('');
          used += bytes;
          if (anonymous) anonymousUsed += bytes;
          add(sender, bytes);
          held += bytes;
        },
        release() {
          if (held === 0) return;
          used -= held;
          if (anonymous) anonymousUsed -= held;
          add(sender!, -held);
          held = 0;
        },
      };
    },
  };
}
