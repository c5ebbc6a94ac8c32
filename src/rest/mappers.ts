// The contract's snake_case shapes that only the REST facade answers (Account, Create result,
// Batch list item, Pagination, the do-not-call list's entry and add answer), one mapper each from the codegen-typed GraphQL result. Call record
// and Batch details are shared with webhooks: services/representations.ts.
import type {
  BatchCreateResultFieldsFragment,
  BatchesReadPaginationFragment,
  RestAddSuppressionsMutation,
  RestBatchesQuery,
  RestMeQuery,
  RestSuppressionsQuery,
} from '../codegen/graphql.ts';

/** The contract's Account. */
export function accountOut(me: RestMeQuery['me']) {
  return {
    account_id: me.id,
    name: me.name,
    email: me.email,
    limits: {
      max_batch_size: me.limits.maxBatchSize,
      max_concurrent_calls: me.limits.maxConcurrentCalls,
      max_call_duration_seconds: me.limits.maxCallDurationSeconds,
      rate_limit_per_minute: me.limits.rateLimitPerMinute,
    },
  };
}
export type AccountOut = ReturnType<typeof accountOut>;

/** The contract's Create result, field for field in the table's order. */
export function createResultOut(r: BatchCreateResultFieldsFragment) {
  return {
    batch_id: r.batchId,
    agent_id: r.agentId,
    version_id: r.versionId,
    status: r.status,
    start_mode: r.startMode,
    total_contacts: r.totalContacts,
    accepted_contacts: r.acceptedContacts,
    rejected_contacts: r.rejectedContacts,
    validation_errors: r.validationErrors.map((e) => ({
      index: e.index,
      external_id: e.externalId,
      field: e.field,
      message: e.message,
    })),
    concurrency: r.concurrency,
    created_at: r.createdAt,
    idempotent: r.idempotent,
    // Beside the contract's fields (docs/api.md "Create warnings").
    warnings: r.warnings.map((w) => ({
      code: w.code,
      message: w.message,
      contact_count: w.contactCount ?? null,
      contacts: w.contacts.map((c) => ({ index: c.index, external_id: c.externalId })),
      contacts_left_out: w.contactsLeftOut,
    })),
  };
}

export type CreateResult = ReturnType<typeof createResultOut>;

export function paginationOut(p: BatchesReadPaginationFragment) {
  return { page: p.page, limit: p.limit, total: p.total, has_more: p.hasMore };
}
export type Pagination = ReturnType<typeof paginationOut>;

/** The contract's Batch list item. */
export function batchListItem(b: RestBatchesQuery['batches']['items'][number]) {
  return {
    batch_id: b.id,
    agent_id: b.agentId,
    version_id: b.versionId,
    status: b.status,
    total_contacts: b.totalContacts,
    queued: b.queued,
    in_progress: b.inProgress,
    completed: b.completed,
    failed: b.failed,
    cancelled: b.cancelled,
    created_at: b.createdAt,
  };
}
export type BatchListItem = ReturnType<typeof batchListItem>;

/** An entry of the do-not-call list. */
export function suppressionOut(s: RestSuppressionsQuery['suppressions']['items'][number]) {
  return { phone_number: s.phoneNumber, reason: s.reason ?? null, source: s.source, created_at: s.createdAt };
}
export type SuppressionOut = ReturnType<typeof suppressionOut>;

/** The answer to an add. */
export function addSuppressionsOut(r: RestAddSuppressionsMutation['addSuppressions']) {
  return { added: r.added, already_listed: r.alreadyListed };
}
export type AddSuppressionsOut = ReturnType<typeof addSuppressionsOut>;
