// Placing a Vapi call without ever placing two for one dial of ours. Vapi's list of calls filters by
// phone number and creation time, not by metadata, so a dial is found by listing the calls its
// number made since the dial's first create and matching our call id AND attempt in their
// assistantOverrides.metadata. The first create goes out without a lookup: the claim that marked
// the call dialled is this worker's, and a dial of a worker that died is recovered through
// findDial, never dialled again. A retry (after a 429/5xx/timeout/lost connection, whose create
// may have gone through) looks the call up first and adopts it if it exists. Each create waits for
// the worker's word that it still holds the call (mayCreate), and is written only while it still
// does (holdsNow): a worker paused in a backoff, or between the two, must not create it late.
import { VapiError, type VapiClient } from '@vapi-ai/server-sdk';
import { DialForfeitedError, ProviderUnavailableError, type PlaceCallRequest } from '../provider.ts';
import { delay, type Scheduler } from '../../../scheduler.ts';
import { GateClosedError } from '../gated-fetch.ts';
import { createCallBody, isDialOf, type VapiCallObject, type VapiDialRef } from './call-mapping.ts';
import type { VapiClients } from './clients.ts';
import { dialRejection, isRetryable, providerMessage } from './dial-errors.ts';

/** GET /call answers at most this many calls per request (its published maximum). */
const PAGE = 1000;
/** Pages read per lookup: a number placing more calls than this in the window is not searched further. */
const MAX_PAGES = 10;
/** Vapi's clock may run behind ours: calls created this much before `since` are listed too. */
const CLOCK_SKEW_MS = 60_000;

/** The Vapi call of this dial (our call id and attempt) among the calls of `phoneNumberId` created since `since`. */
export async function findDial(
  c: VapiClient,
  dial: { callId: string; attempt: number; phoneNumberId?: string | null },
  since: Date,
): Promise<VapiCallObject | null> {
  const createdAtGe = new Date(since.getTime() - CLOCK_SKEW_MS).toISOString();
  let createdAtLt: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const list = (await c.calls.list({
      ...(dial.phoneNumberId ? { phoneNumberId: dial.phoneNumberId } : {}),
      createdAtGe,
      ...(createdAtLt ? { createdAtLt } : {}),
      limit: PAGE,
    })) as unknown as VapiCallObject[];
    const found = list.find((x) => isDialOf(x, dial.callId, dial.attempt));
    if (found) return found;
    if (list.length < PAGE) return null;
    // Older pages: before the oldest call of this one.
    const oldest = list.reduce<string | null>((o, x) => (x.createdAt && (!o || x.createdAt < o) ? x.createdAt : o), null);
    if (!oldest || oldest === createdAtLt) return null;
    createdAtLt = oldest;
  }
  return null;
}

export interface DialRetries {
  maxAttempts: number;
  /** First retry delay, doubling each time (with jitter). */
  backoffMs: number;
  /** Stops retrying (the provider is closing). */
  stopped(): boolean;
  /** The backoff's timers (the provider's scheduler). */
  scheduler: Scheduler;
  now(): Date;
  /** Asked right before each create: false means the worker lost the call (DialForfeitedError). */
  mayCreate?(): Promise<boolean>;
  /** Asked as the create's bytes are written: false keeps them in and asks mayCreate again. */
  holdsNow?(): boolean;
}

/** A 429, or Vapi's 400 for a concurrency limit: the call was refused, not created. */
function refusedBeforeCreating(err: unknown): boolean {
  return err instanceof VapiError && (err.statusCode === 429 || err.statusCode === 400);
}

function gateClosed(err: unknown): boolean {
  return err instanceof VapiError && err.cause instanceof GateClosedError;
}

export async function createDial(
  clients: VapiClients,
  apiKey: string,
  req: PlaceCallRequest,
  ref: VapiDialRef,
  retries: DialRetries,
): Promise<VapiCallObject> {
  const body = createCallBody(req, ref);
  const dial = { callId: req.callId, attempt: req.attempt, phoneNumberId: ref.phoneNumberId };
  let firstSentAt: Date | null = null;
  // Whether a create went out whose answer did not say it was refused (a timeout, a 5xx): it may exist.
  let mayExist = false;
  for (let attempt = 1; ; attempt++) {
    try {
      if (firstSentAt) {
        const found = await findDial(clients(apiKey), dial, firstSentAt);
        if (found) return found;
      }
      if (retries.mayCreate && !(await retries.mayCreate())) throw new DialForfeitedError(req.callId);
      firstSentAt ??= retries.now();
      const create = () => clients(apiKey).calls.create(body) as unknown as Promise<VapiCallObject>;
      try {
        return await (retries.holdsNow ? clients.gated(retries.holdsNow, create) : create());
      } catch (err) {
        mayExist ||= !gateClosed(err) && !refusedBeforeCreating(err);
        throw err;
      }
    } catch (err) {
      // Not sent: the lease needs confirming again (or is lost), which the next turn's mayCreate settles.
      if (gateClosed(err) && attempt < retries.maxAttempts) continue;
      if (!isRetryable(err)) throw err instanceof VapiError ? dialRejection(err) : err;
      if (attempt >= retries.maxAttempts || retries.stopped()) {
        // The last create may still have gone through: adopt it rather than abandon it.
        const found = firstSentAt ? await findDial(clients(apiKey), dial, firstSentAt).catch(() => null) : null;
        if (found) return found;
        const status = err instanceof VapiError ? (err.statusCode ?? null) : null;
        throw new ProviderUnavailableError(
          `Vapi POST /call failed after ${attempt} attempts: ${providerMessage(err)}`,
          mayExist ? 'maybe' : 'no',
          { provider: 'vapi', provider_status: status },
          // A 429 or the concurrency refusal is our account's org's limit, not Vapi's health.
          { cause: err, scope: refusedBeforeCreating(err) ? 'account' : 'provider' },
        );
      }
      await delay(retries.scheduler, retries.backoffMs * 2 ** (attempt - 1) * (0.5 + Math.random() / 2));
    }
  }
}
