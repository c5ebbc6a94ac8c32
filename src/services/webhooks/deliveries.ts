// Operator/customer actions on the outbox: look at a batch's deliveries, re-queue one.
import type { AppDeps } from '../../deps.ts';
import { notFound } from '../../errors.ts';
import type { Account, WebhookDelivery } from '../../generated/prisma/client.ts';

/**
 * Re-queues one delivery of the account now, whatever its state (delivered, failed, disabled):
 * same event, same webhook-id (receivers that already processed it can drop it), a fresh retry
 * schedule. Re-delivering a delivered event does not count again in batches.callbacks.
 */
export async function redeliverWebhook(deps: AppDeps, account: Pick<Account, 'id'>, id: string): Promise<WebhookDelivery> {
  const now = deps.clock.now();
  const n = await deps.db.prisma.$executeRaw`
    UPDATE webhook_deliveries
       SET status = 'pending', attempts = 0, next_attempt_at = ${now}::timestamptz, lease_owner = NULL, lease_expires_at = NULL
     WHERE id = ${id} AND account_id = ${account.id}`;
  if (n === 0) throw notFound(`Webhook delivery ${id} not found`);
  return (await deps.db.prisma.webhookDelivery.findUnique({ where: { id } }))!;
}

/** The URL with any userinfo masked, for display. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.username || u.password) {
      u.username = '***';
      u.password = '';
    }
    return u.toString();
  } catch {
    return url;
  }
}
