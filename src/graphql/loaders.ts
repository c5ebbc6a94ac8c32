// Per-request loaders (one set per GraphQL context, never shared): every lookup of a batch, call,
// agent or prompt version by id — or of a batch's labels shown on its calls — made in the same
// tick becomes one statement per kind, and an id asked again in the same request is answered from
// the loader's cache (or from a row the request already read and primed it with).
import DataLoader from 'dataloader';
import type { Account } from '../generated/prisma/client.ts';
import type { Database } from '../db/client.ts';
import { NODE_KINDS, type NodeKind } from '../domain/global-ids.ts';
import { ownedByIds, type OwnedRows } from '../services/accounts/owned-by-ids.ts';
import { batchLabelsByIds, type BatchLabels } from '../services/batches/batch-labels.ts';
import { retryReasonsByCallIds } from '../services/calls/retry-reasons.ts';
import { dialAuditsByCallIds } from '../services/calls/dial-audits.ts';
import type { DialAudit } from '../domain/dial-audit.ts';
import { batchDetailsByIds, type BatchDetails } from '../services/batches/get-batch.ts';

export type Loaders = { [K in NodeKind]: DataLoader<string, OwnedRows[K] | null> } & {
  /** Voice, agent name and version name of a batch, by batch id (what a call shows of its batch). */
  batchLabels: DataLoader<string, BatchLabels | null>;
  /**
   * The labels this request has read or primed so far, by batch id: a page's calls answer their
   * agentName, versionName and voice from here synchronously (a promise per field of 200 rows was
   * a measurable share of a page's CPU). Filled only through the loader and primeBatchLabels.
   */
  batchLabelsRead: Map<string, BatchLabels>;
  /** A batch's detail columns, by batch id (CallBatch fields of a batch read without them: graphql/types/batch-columns.ts). */
  batchDetails: DataLoader<string, BatchDetails | null>;
  /** Why a call waiting for a retry waits (Call.retryReason), by call id: asked only for waiting calls. */
  retryReasons: DataLoader<string, string | null>;
  /** A call's dial audit entries (Call.dialAudit), by call id: one statement per page. */
  dialAudits: DataLoader<string, DialAudit[]>;
};

/** Loaders scoped to the calling account: another account's id loads as null, like a missing one. */
export function createLoaders(db: Database, account: () => Promise<Account>): Loaders {
  const loaderFor = <K extends NodeKind>(kind: K) =>
    new DataLoader<string, OwnedRows[K] | null>(async (ids) => ownedByIds(db, (await account()).id, kind, ids));
  const byKind = Object.fromEntries(NODE_KINDS.map((kind) => [kind, loaderFor(kind)])) as Omit<
    Loaders,
    'batchLabels' | 'batchLabelsRead' | 'batchDetails' | 'retryReasons' | 'dialAudits'
  >;
  const batchLabelsRead = new Map<string, BatchLabels>();
  const batchLabels = new DataLoader<string, BatchLabels | null>(async (ids) => {
    const rows = await batchLabelsByIds(db, (await account()).id, ids);
    for (const row of rows) if (row) batchLabelsRead.set(row.id, row);
    return rows;
  });
  // Batched within a tick, never cached: a subscription keeps its context, and so these loaders,
  // for its whole life, and each of its events must read the batch as it is then.
  const batchDetails = new DataLoader<string, BatchDetails | null>(async (ids) => batchDetailsByIds(db, (await account()).id, ids), { cache: false });
  const retryReasons = new DataLoader<string, string | null>(async (ids) => retryReasonsByCallIds(db, (await account()).id, ids));
  const dialAudits = new DataLoader<string, DialAudit[]>(async (ids) => dialAuditsByCallIds(db, (await account()).id, ids));
  return { ...byKind, batchLabels, batchLabelsRead, batchDetails, retryReasons, dialAudits };
}

/** A batch's labels the request already read with its page: its calls need no statement and no promise for them. */
export function primeBatchLabels(loaders: Loaders, labels: BatchLabels): void {
  loaders.batchLabels.prime(labels.id, labels);
  loaders.batchLabelsRead.set(labels.id, labels);
}
