// Sends the outbox. Safe with any number of worker processes: a delivery is leased (FOR UPDATE
// SKIP LOCKED) before it is sent, and a worker that dies mid-send just lets its lease expire, after
// which another worker sends the same event again with the same webhook-id (at-least-once).
//
// Outcomes: 2xx → delivered (and batches.callbacks + 1 in the same transaction, the first time
// only); 410 → disabled, with the batch's other queued deliveries, and the batch's callback_url
// cleared; anything else (other statuses, redirects, timeouts, refused or unsafe targets) → retry
// on the schedule, honouring Retry-After, until the attempts run out → failed.
import os from 'node:os';
import crypto from 'node:crypto';
import type { AppDeps } from '../../deps.ts';
import { withSqlTransaction, type SqlTx } from '../../db/sql-transaction.ts';
import { BATCH_DETAILS_FIELDS, CALL_RECORD_FIELDS } from '../representations.ts';
import type { WebhookEvent } from './events.ts';
import { postWebhook, type PostResult } from './http-post.ts';
import { withFreshLinks } from './payload-links.ts';
import { nextAttempt, parseRetryAfter } from './retry.ts';
import { signingSecrets } from './secrets.ts';
import { signedHeaders } from './signing.ts';
import type { Resolver } from './url-safety.ts';

export interface LeasedDelivery {
  id: string;
  accountId: string;
  batchId: string;
  eventType: string;
  payload: WebhookEvent;
  url: string;
  /** Attempts including the one about to be made. */
  attempts: number;
}

export type AttemptOutcome =
  | { id: string; result: 'delivered'; statusCode: number }
  | { id: string; result: 'retry'; statusCode: number | null; error: string; nextAttemptAt: Date }
  | { id: string; result: 'failed'; statusCode: number | null; error: string }
  | { id: string; result: 'disabled'; statusCode: 410 }
  /** The outcome could not be recorded (lease lost, already delivered elsewhere). */
  | { id: string; result: 'superseded'; statusCode: number | null };

export interface DeliveryOptions {
  /** Lease owner; unique per worker. */
  owner: string;
  resolver?: Resolver;
  random?: () => number;
}

export function newWorkerOwner(deps: Pick<AppDeps, 'config'>): string {
  return `${deps.config.WORKER_ID ?? `${os.hostname()}:${process.pid}`}:webhooks:${crypto.randomBytes(4).toString('hex')}`;
}

function leaseMs(deps: Pick<AppDeps, 'config'>): number {
  // A lease must outlive the attempt it covers, or two workers would send at once routinely.
  return Math.max(deps.config.WEBHOOK_LEASE_MS, deps.config.WEBHOOK_TIMEOUT_MS + 10_000);
}

/** Takes up to `limit` due deliveries for `owner`; expired leases of dead workers are due again. */
export async function leaseDueDeliveries(deps: AppDeps, owner: string, limit: number): Promise<LeasedDelivery[]> {
  if (limit <= 0) return [];
  const now = deps.clock.now();
  const until = new Date(now.getTime() + leaseMs(deps));
  return deps.db.prisma.$queryRaw<LeasedDelivery[]>`
    UPDATE webhook_deliveries d
       SET lease_owner = ${owner}, lease_expires_at = ${until}::timestamptz, attempts = d.attempts + 1
     WHERE d.id IN (
       SELECT id FROM webhook_deliveries
        WHERE status = 'pending' AND next_attempt_at <= ${now}::timestamptz
          AND (lease_expires_at IS NULL OR lease_expires_at <= ${now}::timestamptz)
        ORDER BY next_attempt_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED)
    RETURNING d.id, d.account_id AS "accountId", d.batch_id AS "batchId", d.event_type AS "eventType",
              d.payload, d.url, d.attempts`;
}

function ordered(data: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) if (f in data) out[f] = data[f];
  for (const [k, v] of Object.entries(data)) if (!(k in out)) out[k] = v;
  return out;
}

/**
 * The request body. The outbox stores jsonb (queryable, but keys come back sorted by length), so
 * the contract's field order is restored here: every attempt of an event sends the same bytes,
 * but for the recording link, which each attempt signs afresh (payload-links.ts).
 */
export function eventBody(p: WebhookEvent): string {
  const fields = p.type.startsWith('call.') ? CALL_RECORD_FIELDS : BATCH_DETAILS_FIELDS;
  return JSON.stringify({ id: p.id, type: p.type, created_at: p.created_at, data: ordered(p.data, fields) });
}

function failureText(r: PostResult): string {
  if (!r.ok) return r.error;
  if (r.status >= 300 && r.status < 400) {
    const loc = r.headers.location;
    return `HTTP ${r.status}: redirects are not followed${loc ? ` (Location: ${String(loc).slice(0, 200)})` : ''}`;
  }
  const snippet = r.body.replace(/\s+/g, ' ').trim().slice(0, 200);
  return `HTTP ${r.status}${snippet ? `: ${snippet}` : ''}`;
}

// Lock order of every outbox writer that touches batches: batch rows first (in id order, as the
// dispatch worker does), then delivery rows. Nobody holds a delivery row while waiting for a batch.
async function lockBatchRows(tx: SqlTx, batchIds: string[]): Promise<void> {
  await tx.query('SELECT id FROM batches WHERE id = ANY($1::text[]) ORDER BY id FOR NO KEY UPDATE', [[...new Set(batchIds)].sort()]);
}

const DELIVERED_SQL = `
WITH input AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(id text, code int)
), prev AS (
  SELECT w.id, w.batch_id, w.delivered_at, i.code
    FROM webhook_deliveries w JOIN input i ON i.id = w.id
   WHERE w.status = 'pending'
   ORDER BY w.id
     FOR UPDATE OF w
), upd AS (
  UPDATE webhook_deliveries w
     SET status = 'delivered', delivered_at = $2::timestamptz, last_status_code = prev.code,
         last_error = NULL, lease_owner = NULL, lease_expires_at = NULL
    FROM prev WHERE w.id = prev.id
  RETURNING w.id, prev.batch_id, prev.delivered_at IS NULL AS first
), cnt AS (
  UPDATE batches b SET callbacks = b.callbacks + c.n
    FROM (SELECT batch_id, count(*)::int AS n FROM upd WHERE first GROUP BY batch_id) c
   WHERE b.id = c.batch_id
  RETURNING 1
)
SELECT id FROM upd`;

/**
 * Marks deliveries delivered and counts them in batches.callbacks, in one transaction for many
 * deliveries (every success bumps its batch row, so one transaction per success would serialise
 * all deliveries of a batch on that row). Success is recorded even if the lease passed to another
 * worker meanwhile: the event did arrive. `callbacks` counts events delivered, not attempts: a
 * redelivery of an already delivered event adds nothing. Returns the ids recorded.
 */
export async function recordDelivered(deps: AppDeps, items: { d: LeasedDelivery; status: number }[]): Promise<Set<string>> {
  if (items.length === 0) return new Set();
  const now = deps.clock.now();
  const input = JSON.stringify(items.map((i) => ({ id: i.d.id, code: i.status })));
  return withSqlTransaction(deps.db, async (tx) => {
    await lockBatchRows(
      tx,
      items.map((i) => i.d.batchId),
    );
    const rows = await tx.query<{ id: string }>(DELIVERED_SQL, [input, now.toISOString()]);
    return new Set(rows.map((r) => r.id));
  });
}

/**
 * Coalesces concurrent successes: while one transaction records, the next ones queue up and go
 * together in the following one.
 */
function successRecorder(deps: AppDeps) {
  let queue: { d: LeasedDelivery; status: number; done: (ok: boolean) => void; fail: (e: unknown) => void }[] = [];
  let running: Promise<void> | null = null;
  const run = () => {
    running ??= (async () => {
      while (queue.length > 0) {
        const group = queue;
        queue = [];
        try {
          const recorded = await recordDelivered(deps, group);
          for (const g of group) g.done(recorded.has(g.d.id));
        } catch (e) {
          for (const g of group) g.fail(e);
        }
      }
      running = null;
    })();
  };
  return (d: LeasedDelivery, status: number) =>
    new Promise<boolean>((done, fail) => {
      queue.push({ d, status, done, fail });
      run();
    });
}

async function recordGone(deps: AppDeps, d: LeasedDelivery, owner: string): Promise<boolean> {
  const now = deps.clock.now().toISOString();
  const note = 'HTTP 410: the endpoint is gone; deliveries to it for this batch stopped';
  return withSqlTransaction(deps.db, async (tx) => {
    await lockBatchRows(tx, [d.batchId]);
    const mine = await tx.query(
      `UPDATE webhook_deliveries SET status = 'disabled', last_status_code = 410, last_error = $2,
              lease_owner = NULL, lease_expires_at = NULL
        WHERE id = $1 AND status = 'pending' AND lease_owner = $3
       RETURNING id`,
      [d.id, note, owner],
    );
    if (mine.length === 0) return false;
    // Waiting deliveries of the same endpoint stop too; one being recorded right now is skipped
    // (if it was not delivered it meets the 410 itself).
    await tx.query(
      `UPDATE webhook_deliveries SET status = 'disabled', last_error = $3, lease_owner = NULL, lease_expires_at = NULL
        WHERE id IN (SELECT id FROM webhook_deliveries
                      WHERE batch_id = $1 AND url = $2 AND status = 'pending'
                      FOR UPDATE SKIP LOCKED)`,
      [d.batchId, d.url, note],
    );
    // No new events are queued for this batch from now on (the outbox reads callback_url).
    await tx.query(`UPDATE batches SET callback_url = NULL, updated_at = $3::timestamptz WHERE id = $1 AND callback_url = $2`, [
      d.batchId,
      d.url,
      now,
    ]);
    return true;
  });
}

async function recordFailure(
  deps: AppDeps,
  d: LeasedDelivery,
  owner: string,
  statusCode: number | null,
  error: string,
  next: Date | null,
): Promise<boolean> {
  const n = await deps.db.prisma.$executeRaw`
    UPDATE webhook_deliveries
       SET status = ${next ? 'pending' : 'failed'},
           next_attempt_at = COALESCE(${next}::timestamptz, next_attempt_at),
           last_status_code = ${statusCode}, last_error = ${error.slice(0, 1000)},
           lease_owner = NULL, lease_expires_at = NULL
     WHERE id = ${d.id} AND status = 'pending' AND lease_owner = ${owner}`;
  return n > 0;
}

type SecretCache = Map<string, Promise<string[]>>;
const SECRET_CACHE_MS = 5000;
type RecordSuccess = (d: LeasedDelivery, status: number) => Promise<boolean>;

/** One attempt of one leased delivery, and its outcome written back. */
export async function attemptDelivery(
  deps: AppDeps,
  d: LeasedDelivery,
  opts: DeliveryOptions,
  secrets: SecretCache = new Map(),
  recordSuccess: RecordSuccess = async (x, status) => (await recordDelivered(deps, [{ d: x, status }])).has(x.id),
): Promise<AttemptOutcome> {
  const body = eventBody(withFreshLinks(deps, d.payload));
  let keys = secrets.get(d.accountId);
  if (!keys) secrets.set(d.accountId, (keys = signingSecrets(deps, d.accountId)));
  let headers: ReturnType<typeof signedHeaders>;
  try {
    headers = signedHeaders(await keys, d.id, deps.clock.now(), body);
  } catch (e) {
    // Nothing was sent; recorded like any failed attempt so it shows and runs out of retries.
    return failed(deps, d, opts, null, `not sent: ${(e as Error).message}`, null);
  }
  const res = await postWebhook({
    url: d.url,
    headers: { ...headers },
    body,
    timeoutMs: deps.config.WEBHOOK_TIMEOUT_MS,
    allowPrivate: deps.config.WEBHOOK_ALLOW_PRIVATE,
    resolver: opts.resolver,
  });
  const code = res.ok ? res.status : null;
  if (res.ok && res.status >= 200 && res.status < 300) {
    return (await recordSuccess(d, res.status))
      ? { id: d.id, result: 'delivered', statusCode: res.status }
      : { id: d.id, result: 'superseded', statusCode: code };
  }
  if (res.ok && res.status === 410) {
    return (await recordGone(deps, d, opts.owner))
      ? { id: d.id, result: 'disabled', statusCode: 410 }
      : { id: d.id, result: 'superseded', statusCode: code };
  }
  return failed(deps, d, opts, code, failureText(res), res.ok ? res.headers['retry-after'] : undefined);
}

async function failed(
  deps: AppDeps,
  d: LeasedDelivery,
  opts: DeliveryOptions,
  code: number | null,
  error: string,
  retryAfterHeader: string | string[] | null | undefined,
): Promise<AttemptOutcome> {
  const now = deps.clock.now();
  const retryAfter = parseRetryAfter(retryAfterHeader ?? undefined, now);
  const { nextAttemptAt } = nextAttempt(now, d.attempts, deps.config.WEBHOOK_RETRY_SCHEDULE, retryAfter, opts.random);
  const recorded = await recordFailure(deps, d, opts.owner, code, error, nextAttemptAt);
  if (!recorded) return { id: d.id, result: 'superseded', statusCode: code };
  if (!nextAttemptAt) {
    deps.logger.warn({ deliveryId: d.id, batchId: d.batchId, attempts: d.attempts, error }, 'webhook delivery failed for good');
    return { id: d.id, result: 'failed', statusCode: code, error };
  }
  return { id: d.id, result: 'retry', statusCode: code, error, nextAttemptAt };
}

/** Leases what is due now (up to `limit`) and sends it, all in parallel; resolves when all are recorded. */
export async function deliverDue(deps: AppDeps, opts: Partial<DeliveryOptions> & { limit?: number } = {}): Promise<AttemptOutcome[]> {
  const o: DeliveryOptions = { owner: opts.owner ?? newWorkerOwner(deps), resolver: opts.resolver, random: opts.random };
  const leased = await leaseDueDeliveries(deps, o.owner, opts.limit ?? deps.config.WEBHOOK_CONCURRENCY);
  const secrets: SecretCache = new Map();
  const record = successRecorder(deps);
  const outcomes = await Promise.all(leased.map((d) => attemptDelivery(deps, d, o, secrets, record)));
  for (const r of outcomes) deps.metrics.webhookDeliveries.inc({ outcome: r.result });
  return outcomes;
}

export interface DeliveryWorker {
  readonly owner: string;
  stop(): Promise<void>;
}

/**
 * The background loop: every WEBHOOK_POLL_MS it fills its free slots (WEBHOOK_CONCURRENCY) with due
 * deliveries, so one slow receiver does not hold up the others. stop() waits for in-flight attempts.
 */
export function startWebhookDeliveryWorker(deps: AppDeps, opts: Partial<DeliveryOptions> = {}): DeliveryWorker {
  const o: DeliveryOptions = { owner: opts.owner ?? newWorkerOwner(deps), resolver: opts.resolver, random: opts.random };
  const log = deps.logger.child({ component: 'webhook-delivery', owner: o.owner });
  const inFlight = new Set<Promise<unknown>>();
  const record = successRecorder(deps);
  let secrets: SecretCache = new Map();
  let secretsAt = 0;
  let stopped = false;
  let wake: (() => void) | undefined;

  const tick = async () => {
    const free = deps.config.WEBHOOK_CONCURRENCY - inFlight.size;
    const leased = await leaseDueDeliveries(deps, o.owner, free);
    // Secrets are re-read every few seconds, not per attempt: a rotation shows up in signatures
    // within SECRET_CACHE_MS (the old secret keeps signing for hours anyway).
    if (Date.now() - secretsAt > SECRET_CACHE_MS) {
      secrets = new Map();
      secretsAt = Date.now();
    }
    for (const d of leased) {
      const p = attemptDelivery(deps, d, o, secrets, record)
        .then((r) => log.debug({ deliveryId: d.id, ...r }, 'webhook attempt'))
        // Not recorded: the lease expires and the delivery is tried again.
        .catch((e: unknown) => log.error({ err: e, deliveryId: d.id }, 'webhook attempt could not be recorded'))
        .finally(() => {
          inFlight.delete(p);
          // Refill once half the slots are free (one lease for many), or at the next poll.
          if (inFlight.size <= deps.config.WEBHOOK_CONCURRENCY / 2) wake?.();
        });
      inFlight.add(p);
    }
    return leased.length === free && free > 0;
  };

  const loop = (async () => {
    while (!stopped) {
      let busy = false;
      try {
        busy = await tick();
      } catch (e) {
        log.error({ err: e }, 'webhook delivery poll failed');
      }
      if (busy || stopped) continue;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, deps.config.WEBHOOK_POLL_MS);
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      wake = undefined;
    }
  })();

  return {
    owner: o.owner,
    async stop() {
      stopped = true;
      wake?.();
      await loop;
      await Promise.allSettled([...inFlight]);
    },
  };
}
