// number.rested / number.restored to the operator: webhooks belong to batches (their callback_url,
// signed with the account's secret), so an account-level event goes to each distinct callback_url of
// the account's batches still under way, queued once per URL with the oldest such batch, in the
// job's transaction — only for an account that opted in (accounts.number_health_webhooks), since a
// receiver written for its batches' events alone must not get others (docs/webhooks.md).
import type { SqlTx } from '../../db/sql-transaction.ts';
import type { NumberEventType } from '../webhooks/events.ts';
import { enqueueWebhook } from '../webhooks/outbox.ts';

/** Most URLs one event goes to (distinct callback_urls of live batches; more are rare and skipped). */
export const MAX_NUMBER_EVENT_URLS = 20;

const TARGETS_SQL = `
SELECT DISTINCT ON (b.callback_url) b.id, b.callback_url
  FROM batches b JOIN accounts a ON a.id = b.account_id AND a.number_health_webhooks
 WHERE b.account_id = $1 AND b.callback_url IS NOT NULL AND b.status IN ('pending', 'paused', 'queued', 'dispatching', 'running')
 ORDER BY b.callback_url, b.id
 LIMIT ${MAX_NUMBER_EVENT_URLS}`;

export interface NumberEvent {
  type: NumberEventType;
  data: Record<string, unknown>;
}

/** Queues the events for the account's live callback URLs; returns how many deliveries were queued. */
export async function queueNumberEvents(tx: SqlTx, accountId: string, events: NumberEvent[], at: Date): Promise<number> {
  if (events.length === 0) return 0;
  const targets = await tx.query<{ id: string; callback_url: string }>(TARGETS_SQL, [accountId]);
  let queued = 0;
  for (const t of targets)
    for (const e of events) {
      const id = await enqueueWebhook(tx, { accountId, batchId: t.id, callbackUrl: t.callback_url, type: e.type, data: e.data, at });
      if (id) queued++;
    }
  return queued;
}
