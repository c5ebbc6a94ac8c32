// The webhooks dispatch causes, queued in the outbox inside the transaction of the change itself
// (src/services/webhooks/outbox.ts): exactly one terminal event per dialled call, named by the
// status it ends in - call.failed when it ends no_answer, busy or failed (answered or not, e.g.
// dispatcher_lost), call.completed when a completed call's record is final (its analysis settled,
// see callWebhookTypes) - and call.analyzed when an answered call's analysis settles;
// batch.started at the first dial, batch.completed when the last call ends (analyses of the last
// calls may still be running), batch.cancelled on cancel. Batches without a callback_url queue
// nothing.
import type { AppDeps } from '../../deps.ts';
import type { SqlTx } from '../../db/sql-transaction.ts';
import { callWebhookTypes, type BatchEventType, type CallEventType } from './events.ts';
import { enqueueBatchWebhooks, enqueueCallWebhooks } from './outbox.ts';

export type WebhookDeps = Pick<AppDeps, 'config' | 'appSecret' | 'clock'>;

/** The part of a call write (services/calls/call-transitions.ts) that decides its webhooks. */
export interface CallChange {
  callId: string;
  from: string;
  to: string;
  set: { transcriptStatus?: string };
  /** false: the batch is known to have no callback_url. */
  webhooks?: boolean;
}

export async function enqueueCallWriteWebhooks(tx: SqlTx, deps: WebhookDeps, writes: CallChange[], applied: Set<string>, at: Date): Promise<void> {
  const events: { type: CallEventType; callId: string }[] = [];
  for (const w of writes) {
    if (!applied.has(w.callId) || w.webhooks === false) continue;
    for (const type of callWebhookTypes(w.from, w.to, w.set.transcriptStatus ?? null)) events.push({ type, callId: w.callId });
  }
  if (events.length > 0) await enqueueCallWebhooks(tx, deps, events, at);
}

export async function enqueueBatchEvents(tx: SqlTx, type: BatchEventType, batchIds: string[], at: Date): Promise<void> {
  if (batchIds.length === 0) return;
  await enqueueBatchWebhooks(
    tx,
    batchIds.map((batchId) => ({ type, batchId })),
    at,
  );
}
