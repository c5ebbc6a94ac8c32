// Batch details: one indexed row read; the counters are stored on the row and moved by the worker
// in the same transaction as the call changes, so every read sees them summing to accepted_contacts.
import type { AppDeps } from '../../deps.ts';
import { batchNotFound } from '../../errors.ts';
import { scalarFields } from '../../db/model-columns.ts';
import { snakeCase } from '../../domain/text-forms.ts';
import type { Account, Batch, Prisma } from '../../generated/prisma/client.ts';
import { fixedStatement, runStatement, type FixedStatement } from '../../db/sql-statement.ts';
import type { Database } from '../../db/client.ts';
import { LABEL_COLUMNS, LABEL_JOINS, type BatchLabels } from './batch-labels.ts';
import { inIdOrder } from '../accounts/owned-by-ids.ts';
import { BATCH_OPTION_NAMES, type BatchOptionName } from '../../domain/batch-options.ts';

/** The include/select a GraphQL resolver hands down, so nested fields load in the same round. */
export interface BatchQuery {
  include?: Prisma.BatchInclude;
  select?: Prisma.BatchSelect;
}

/** Each scalar field's select-list entry (`"column" AS "field"`), spelled once. */
const COLUMN_SQL: ReadonlyMap<string, string> = new Map([...scalarFields('Batch')].map((f) => [f, `"${snakeCase(f)}" AS "${f}"`]));

/**
 * The columns of the CallBatch fields that declare none (graphql/types/batch-columns.ts): batch
 * details, which shows them all, reads them with any selection, and a list whose document asks for
 * one of those fields reads them with its page, so neither reads its rows a second time.
 */
const DETAIL_COLUMNS = {
  startMode: true,
  scheduledAt: true,
  timezone: true,
  concurrency: true,
  acceptedContacts: true,
  rejectedContacts: true,
  callbacks: true,
  startedAt: true,
  completedAt: true,
  retryMaxAttempts: true,
  retryOn: true,
  retryDelaySeconds: true,
  expiresAt: true,
  callingWindow: true,
  enforcedWindow: true,
  ...(Object.fromEntries(BATCH_OPTION_NAMES.map((name) => [name, true])) as Record<BatchOptionName, true>),
} as const satisfies Prisma.BatchSelect;

export type BatchDetailColumn = keyof typeof DETAIL_COLUMNS;

/**
 * The columns every read of a Prisma-backed batch loads (CallBatch's type-level `select`,
 * graphql/types/batch.ts): what a row of the batch list shows, so its fields read the row directly.
 */
export const BATCH_ROW_COLUMNS = {
  id: true,
  promptVersionId: true,
  status: true,
  agentId: true,
  totalContacts: true,
  queued: true,
  inProgress: true,
  completed: true,
  failed: true,
  cancelled: true,
  createdAt: true,
} as const satisfies Prisma.BatchSelect;

/**
 * The columns batch details reads (the row's and the detail columns): a selection within them is
 * read by one fixed statement. Only these: each column costs the driver ~0.3 µs a row description,
 * and a read by id gets one with every row.
 */
const BATCH_READ_FIELDS: ReadonlySet<string> = new Set(Object.keys({ ...BATCH_ROW_COLUMNS, ...DETAIL_COLUMNS }));
const BY_ID = 'FROM batches WHERE id = $1 AND account_id = $2';
const READ_SQL = fixedStatement(`SELECT ${[...BATCH_READ_FIELDS].map((f) => COLUMN_SQL.get(f)).join(', ')} ${BY_ID}`);

/**
 * The statement that reads a selection of plain columns: the fixed one, unless it names a column
 * that one leaves out; null when the selection loads relations.
 */
function plainStatement(select: Prisma.BatchSelect | undefined): FixedStatement | string | null {
  if (!select) return null;
  let list = '';
  let fixed = true;
  for (const field in select) {
    const wanted = select[field as keyof Prisma.BatchSelect];
    if (wanted === false || wanted === undefined) continue;
    const sql = wanted === true ? COLUMN_SQL.get(field) : undefined;
    if (!sql) return null;
    fixed &&= BATCH_READ_FIELDS.has(field);
    list = list ? `${list}, ${sql}` : sql;
  }
  if (!list) return null;
  return fixed ? READ_SQL : `SELECT ${list} ${BY_ID}`;
}

/** A batch's detail columns alone. */
export type BatchDetails = Pick<Batch, 'id' | BatchDetailColumn>;

/**
 * The account's batches' detail columns by id, in the order of `ids` (null where it has none): for
 * a batch read without them. Only these columns: a whole row holds its validation errors too.
 */
export async function batchDetailsByIds(db: Database, accountId: string, ids: readonly string[]): Promise<(BatchDetails | null)[]> {
  return inIdOrder(
    ids,
    await db.prisma.batch.findMany({ where: { id: { in: [...new Set(ids)] }, accountId }, select: { id: true, ...DETAIL_COLUMNS } }),
  );
}

/** The selection with the detail columns added; a query without one reads every column anyway. */
export function withDetailColumns<Q extends BatchQuery>(query: Q): Q {
  return query.select ? { ...query, select: { ...query.select, ...DETAIL_COLUMNS } } : query;
}

/**
 * A batch of the account; absent and foreign batches are the same 404.
 *
 * Batch details is the hottest read (dashboards poll it) and every batch-scoped list starts here.
 * When the selection is plain columns the row comes from one statement on the driver: a Prisma
 * model query compiles the query on every call (Prisma 6 has no plan cache), which measured here
 * was most of the request's CPU.
 */
export async function getBatch(deps: AppDeps, account: Account, batchId: string, query: BatchQuery = {}): Promise<Batch> {
  const { select } = withDetailColumns(query);
  const statement = plainStatement(select);
  let batch: Batch | null;
  if (statement) {
    const rows = await runStatement<Batch>(deps.db, statement, [batchId, account.id]);
    batch = rows[0] ?? null;
  } else {
    batch = (await deps.db.prisma.batch.findFirst({
      ...query,
      ...(select && { select }),
      where: { id: batchId, accountId: account.id },
    })) as Batch | null;
  }
  if (!batch) throw batchNotFound();
  return batch;
}

/**
 * What the batch-scoped call lists need from their batch: ownership, status and counters, and the
 * labels its calls show (so a page of its calls needs no second read of the batch).
 */
export interface BatchScope extends BatchLabels {
  status: string;
  queued: number;
  inProgress: number;
  completed: number;
  failed: number;
  cancelled: number;
}

const SCOPE_SQL = fixedStatement(`SELECT b.id AS "id", b.status AS "status", b.queued AS "queued", b.in_progress AS "inProgress",
  b.completed AS "completed", b.failed AS "failed", b.cancelled AS "cancelled", ${LABEL_COLUMNS}
  FROM batches b ${LABEL_JOINS} WHERE b.id = $1 AND b.account_id = $2`);

/** One indexed statement (the joins are primary-key probes); absent and foreign batches are the same 404. */
export async function batchScope(deps: AppDeps, account: Account, batchId: string): Promise<BatchScope> {
  const [batch] = await runStatement<BatchScope>(deps.db, SCOPE_SQL, [batchId, account.id]);
  if (!batch) throw batchNotFound();
  return batch;
}

/** Number of calls in the batch, from the counters (each call sits in exactly one bucket). */
export function callCount(b: BatchScope): number {
  return b.queued + b.inProgress + b.completed + b.failed + b.cancelled;
}
