// Operator/customer actions on the outbox: look at a batch's deliveries, re-queue one.
import type { AppDeps } from '../../deps.ts';
import { notFound } from '../../errors.ts';
import { Prisma, type Account, type WebhookDelivery } from '../../generated/prisma/client.ts';

/**
 * Re-queues one delivery of the account now, whatever its state (delivered, failed, disabled):
 * same event, same webhook-id (receivers that already processed it can drop it), a fresh retry
 * schedule. Re-delivering a delivered event does not count again in batches.callbacks.
 */
export async function redeliverWebhook(deps: AppDeps, account: Pick<Account, 'id'>, id: string): Promise<WebhookDelivery> {
  try {
    // The row as this update left it (UPDATE … RETURNING): a read after it could already see the
    // delivery worker's next attempt.
    return await deps.db.prisma.webhookDelivery.update({
      where: { id, accountId: account.id },
      data: { status: 'pending', attempts: 0, nextAttemptAt: deps.clock.now(), leaseOwner: null, leaseExpiresAt: null },
    });
  } catch (e) {
    // P2025: no such delivery of this account.
    if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === 'P2025') throw notFound(`Webhook delivery ${id} not found`);
    throw e;
  }
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
