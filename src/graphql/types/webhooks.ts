// Webhooks: each batch's deliveries (the outbox), re-queueing one, and the account's signing secret.
import { builder } from '../builder.ts';
import { DELIVERY_STATUSES } from '../../services/webhooks/events.ts';
import { displayUrl, redeliverWebhook } from '../../services/webhooks/deliveries.ts';
import { rotateWebhookSecret, webhookSecret, type WebhookSecretInfo } from '../../services/webhooks/secrets.ts';

const WebhookDeliveryStatus = builder.enumType('WebhookDeliveryStatus', {
  description:
    'pending: due or waiting for a retry; delivered: a 2xx was received; failed: attempts exhausted; disabled: the endpoint answered 410 Gone',
  values: DELIVERY_STATUSES,
});

builder.prismaObject('WebhookDelivery', {
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Also the `webhook-id` header and the payload `id`, stable across retries' }),
    batchId: t.exposeString('batchId'),
    eventType: t.exposeString('eventType'),
    status: t.field({ type: WebhookDeliveryStatus, resolve: (d) => d.status as (typeof DELIVERY_STATUSES)[number] }),
    attempts: t.exposeInt('attempts', { description: 'Attempts made so far (a redelivery starts again at 0)' }),
    lastStatusCode: t.exposeInt('lastStatusCode', { nullable: true }),
    lastError: t.exposeString('lastError', { nullable: true }),
    nextAttemptAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When the next attempt is due; null once the delivery is no longer pending',
      select: { status: true, nextAttemptAt: true },
      resolve: (d) => (d.status === 'pending' ? d.nextAttemptAt : null),
    }),
    deliveredAt: t.expose('deliveredAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    url: t.string({ description: 'Target URL (credentials masked)', select: { url: true }, resolve: (d) => displayUrl(d.url) }),
    payload: t.expose('payload', { type: 'JSON', description: 'The event body: {id, type, created_at, data}' }),
  }),
});

builder.prismaObjectFields('Batch', (t) => ({
  webhookDeliveries: t.relatedConnection('webhooks', {
    cursor: 'id',
    description: 'Webhook deliveries of the batch, oldest first',
    args: { status: t.arg({ type: WebhookDeliveryStatus }) },
    maxSize: 200,
    defaultSize: 50,
    totalCount: true,
    query: (args) => ({ where: args.status ? { status: args.status } : {}, orderBy: { id: 'asc' } }),
  }),
}));

const WebhookSecretType = builder.objectRef<WebhookSecretInfo>('WebhookSecret').implement({
  description: 'Standard Webhooks signing secret of the account (`whsec_` + base64 key)',
  fields: (t) => ({
    secret: t.exposeString('secret'),
    previousSecret: t.exposeString('previousSecret', {
      nullable: true,
      description: 'The secret before the last rotation while it still signs (both signatures are sent)',
    }),
    rotatedAt: t.expose('rotatedAt', { type: 'DateTime', nullable: true }),
    previousSecretExpiresAt: t.expose('previousSecretExpiresAt', { type: 'DateTime', nullable: true }),
  }),
});

builder.queryFields((t) => ({
  webhookSecret: t.field({
    type: WebhookSecretType,
    description: "The account's webhook signing secret (created on first use)",
    resolve: async (_r, _a, ctx) => webhookSecret(ctx.deps, (await ctx.account()).id),
  }),
}));

builder.mutationFields((t) => ({
  rotateWebhookSecret: t.field({
    type: WebhookSecretType,
    description: 'New signing secret; the previous one keeps signing too for the overlap window (24 h by default)',
    resolve: async (_r, _a, ctx) => rotateWebhookSecret(ctx.deps, await ctx.account()),
  }),
  redeliverWebhook: t.prismaField({
    type: 'WebhookDelivery',
    description: 'Re-queues one delivery now (same event and webhook-id, fresh retry schedule)',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_query, _r, { id }, ctx) => redeliverWebhook(ctx.deps, await ctx.account(), String(id)),
  }),
}));
