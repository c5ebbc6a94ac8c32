// Placing a Retell call without ever placing two for one dial of ours: before every create
// (first try or retry) Retell is asked (list-calls) for a call carrying our call id AND attempt in
// its metadata, so a create whose answer was lost to a timeout or 5xx, or a dial repeated after a
// worker died, adopts the existing Retell call. 429/5xx/network errors retry with exponential
// backoff; other 4xx fail the dial with Retell's message. Each create waits for the worker's word
// that it still holds the call (mayCreate), and is written only while it still does (holdsNow): a
// worker paused in a backoff, or between the two, must not create it late.
import Retell from 'retell-sdk';
import { DialForfeitedError, ProviderUnavailableError, type PlaceCallRequest } from '../provider.ts';
import { delay, type Scheduler } from '../../../scheduler.ts';
import { createPhoneCallBody, isDialOf, type RetellAgentRef, type RetellCallObject } from './call-mapping.ts';
import { dialRejection, isRetryable, providerMessage } from './dial-errors.ts';
import { GateClosedError, SEND_GATE } from '../gated-fetch.ts';

/** The Retell call of this dial (our call id and attempt), if Retell has one. */
export async function findDial(c: Retell, callId: string, attempt: number): Promise<RetellCallObject | null> {
  // POST /v2/list-calls as published in the OpenAPI file (the SDK's call.list() targets /v3).
  // Filtered by call id only (metadata values match "as strings"); the attempt is checked here.
  const list = (await c.post('/v2/list-calls', {
    body: { filter_criteria: { metadata: { 'metadata.call_id': [callId] } }, limit: 50 },
  })) as unknown as RetellCallObject[];
  return list.find((x) => isDialOf(x, callId, attempt)) ?? null;
}

export interface DialRetries {
  maxAttempts: number;
  /** First retry delay, doubling each time (with jitter). */
  backoffMs: number;
  /** Stops retrying (the provider is closing). */
  stopped(): boolean;
  /** The backoff's timers (the provider's scheduler). */
  scheduler: Scheduler;
  /** Asked right before each create: false means the worker lost the call (DialForfeitedError). */
  mayCreate?(): Promise<boolean>;
  /** Asked as the create's bytes are written: false keeps them in and asks mayCreate again. */
  holdsNow?(): boolean;
}

export async function createDial(c: Retell, req: PlaceCallRequest, agent: RetellAgentRef, retries: DialRetries): Promise<RetellCallObject> {
  const body = createPhoneCallBody(req, agent);
  // Whether a create went out whose answer did not say it was refused (a timeout, a 5xx): it may exist.
  let mayExist = false;
  for (let attempt = 1; ; attempt++) {
    try {
      const found = await findDial(c, req.callId, req.attempt);
      if (found) return found;
      if (retries.mayCreate && !(await retries.mayCreate())) throw new DialForfeitedError(req.callId);
      const gated = retries.holdsNow ? { fetchOptions: { [SEND_GATE]: retries.holdsNow } as never } : undefined;
      try {
        return (await c.call.createPhoneCall(body as never, gated)) as unknown as RetellCallObject;
      } catch (err) {
        mayExist ||= createMayExist(err);
        throw err;
      }
    } catch (err) {
      // Not sent: the lease needs confirming again (or is lost), which the next turn's mayCreate settles.
      if (err instanceof Retell.APIConnectionError && err.cause instanceof GateClosedError && attempt < retries.maxAttempts) continue;
      if (!isRetryable(err)) throw err instanceof Retell.APIError ? dialRejection(err) : err;
      if (attempt >= retries.maxAttempts || retries.stopped()) {
        // The last create may still have gone through: adopt it rather than abandon it.
        const found = await findDial(c, req.callId, req.attempt).catch(() => null);
        if (found) return found;
        const status = err instanceof Retell.APIError ? (err.status ?? null) : null;
        throw new ProviderUnavailableError(
          `Retell create-phone-call failed after ${attempt} attempts: ${providerMessage(err)}`,
          mayExist ? 'maybe' : 'no',
          { provider: 'retell', provider_status: status },
          // A 429 is our account's key's limit, not Retell's health.
          { cause: err, scope: status === 429 ? 'account' : 'provider' },
        );
      }
      await delay(retries.scheduler, retries.backoffMs * 2 ** (attempt - 1) * (0.5 + Math.random() / 2));
    }
  }
}

/** A failed create that may still have made the call: not a 429 (refused before creating) nor a send the gate kept in. */
function createMayExist(err: unknown): boolean {
  if (err instanceof Retell.APIConnectionError && err.cause instanceof GateClosedError) return false;
  return !(err instanceof Retell.APIError && err.status === 429);
}
