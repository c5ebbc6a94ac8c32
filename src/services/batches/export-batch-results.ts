// A batch's results read for a CSV export, a keyset page at a time (seq after the last one read,
// so page 500 costs what page 1 does), each page in chunks of EXPORT_CHUNK_ROWS with a turn of the
// event loop between them: embedded PGlite runs a statement on the process's own thread, and
// every other request's statements queue behind the one running. The export holds one of the process's export slots from
// before its first read until close(), and every page after the first spends one unit of the
// account's per-minute budget (the request's own unit pays for the first): an export costs what
// paging the JSON results route at its largest page size costs.
import type { AppDeps } from '../../deps.ts';
import { selectList } from '../../db/model-columns.ts';
import { inBulkLane } from '../../db/pglite-turns.ts';
import { runStatement } from '../../db/sql-statement.ts';
import { AppError } from '../../errors.ts';
import type { Account, Call } from '../../generated/prisma/client.ts';
import { apiKeyAuthenticates } from '../auth/api-keys.ts';
import { accountBudgetKey, accountRateLimited, type RateLimiters } from '../auth/rate-limit.ts';
import { callConditions, callFilterIssues } from '../calls/list-batch-calls.ts';
import { recordingUrlOf } from '../recording-url.ts';
import { retryReasonsByCallIds } from '../calls/retry-reasons.ts';
import { waitsForRetry } from '../../domain/call-attempts.ts';
import { BATCH_RESULTS_PAGE, throwIfIssues } from '../pagination.ts';
import { numberDialled, type CallRecordSource } from '../representations.ts';
import { Prisma } from '../../generated/prisma/client.ts';
import { outcomeWhere, type ResultFilter } from './batch-results.ts';
import type { ScanSlots } from './scan-slots.ts';
import { batchScope } from './get-batch.ts';

/** Rows per page: the JSON route's largest page, so a unit of budget buys the same rows on both. */
export const EXPORT_PAGE_ROWS = BATCH_RESULTS_PAGE.maxLimit;

/**
 * Rows per statement. On PGlite a 200-row page of 1 kB transcripts held the thread ~12-25 ms and
 * another tenant's request waited behind such reads of every running export; 50 rows cut that
 * wait by 4. PostgreSQL runs elsewhere, so a page is one statement there.
 */
export const exportChunkRows = (deps: AppDeps): number => (deps.db.kind === 'pglite' ? 50 : EXPORT_PAGE_ROWS);

export type ExportDeps = AppDeps & { rateLimiters: RateLimiters; exports: ScanSlots };

export interface ResultsExport {
  /** The next rows in submission order; `last` once no more follow. Throws RATE_LIMITED when the budget is spent. */
  nextPage(): Promise<{ rows: CallRecordSource[]; last: boolean }>;
  /** Frees the slot; safe to call more than once, and nothing is read after it. */
  close(): void;
  /** Pages read so far (for logs and tests). */
  readonly pagesRead: number;
}

const CALL_COLUMNS = [
  'id',
  'seq',
  'batchId',
  'externalId',
  'phoneNumber',
  'dialedNumber',
  'agentId',
  'status',
  'transcriptStatus',
  'durationSeconds',
  'answerDurationSeconds',
  'timestamp',
  'createdAt',
  'completedAt',
  'hangupBy',
  'disconnectReason',
  'summary',
  'outcomes',
  'recordingAvailable',
  'llmTranscript',
  'promptVersionId',
  'attempts',
  'nextAttemptAt',
  'timezone',
  'consentSource',
  'consentAt',
  'consentText',
  'consentReference',
  'voicemailLeft',
  'fromNumber',
] as const;
const SELECT_LIST = Prisma.raw(selectList(CALL_COLUMNS, 'c'));

type ExportedCall = Pick<Call, (typeof CALL_COLUMNS)[number]>;

type BatchNames = { agentName: string; versionName: string; voice: string };

async function batchNames(deps: ExportDeps, batchId: string): Promise<BatchNames> {
  const b = await deps.db.prisma.batch.findUniqueOrThrow({
    where: { id: batchId },
    select: { voice: true, agent: { select: { name: true } }, promptVersion: { select: { name: true } } },
  });
  return { agentName: b.agent.name, versionName: b.promptVersion.name, voice: b.voice };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Up to a page of calls after `afterSeq`, in chunks; a turn of the event loop before each chunk after the first. */
async function callsAfter(deps: ExportDeps, batchId: string, filter: ResultFilter, afterSeq: number): Promise<ExportedCall[]> {
  const where = filter.outcome == null ? callConditions(batchId, filter) : outcomeWhere(batchId, { ...filter, outcome: filter.outcome });
  const chunk = exportChunkRows(deps);
  const rows: ExportedCall[] = [];
  let after = afterSeq;
  while (rows.length < EXPORT_PAGE_ROWS) {
    if (rows.length > 0) await nextTurn();
    const take = Math.min(chunk, EXPORT_PAGE_ROWS - rows.length);
    const sql = Prisma.sql`SELECT ${SELECT_LIST} FROM calls c WHERE ${where} AND c.seq > ${after} ORDER BY c.seq LIMIT ${take}`;
    const got = await inBulkLane(() => runStatement<ExportedCall>(deps.db, sql.text, sql.values));
    rows.push(...got);
    if (got.length < take) break;
    after = got[got.length - 1].seq;
  }
  return rows;
}

/**
 * Opens an export of the account's batch: 404 for an absent or foreign batch, 422 for a bad
 * filter, RATE_LIMITED when the slots are taken; all before anything is streamed.
 * `apiKey` is the key the export was asked with: each page after the first checks it still
 * authenticates (a key revoked mid-export stops it) and spends the account's budget. `null` for the
 * operator acting for an account, who spends no budget and whose token is the server's own.
 */
export async function openResultsExport(
  deps: ExportDeps,
  account: Account,
  batchId: string,
  input: ResultFilter,
  opts: { apiKey: string | null },
): Promise<ResultsExport> {
  const filter: ResultFilter = { outcome: input.outcome, status: input.status, transcriptStatus: input.transcriptStatus };
  throwIfIssues(callFilterIssues(filter));
  const batch = await batchScope(deps, account, batchId);
  const release = deps.exports.acquire(account.id);
  let names: BatchNames;
  try {
    names = await batchNames(deps, batch.id);
  } catch (e) {
    release();
    throw e;
  }
  let afterSeq = 0;
  let pagesRead = 0;
  let closed = false;

  async function spendOne(): Promise<void> {
    if (opts.apiKey === null) return;
    if (!(await apiKeyAuthenticates(deps.db, opts.apiKey))) throw new AppError('UNAUTHENTICATED', 'Invalid API key');
    const state = await deps.rateLimiters.accounts.consume(accountBudgetKey(account.id), account.rateLimitPerMinute);
    if (state.limited) throw accountRateLimited(state);
  }

  return {
    get pagesRead() {
      return pagesRead;
    },
    close() {
      closed = true;
      release();
    },
    async nextPage() {
      if (closed) throw new AppError('UNAVAILABLE', 'The export has ended');
      if (pagesRead > 0) await spendOne();
      const calls = await callsAfter(deps, batch.id, filter, afterSeq);
      pagesRead++;
      if (calls.length) afterSeq = calls[calls.length - 1].seq;
      // One read of the history, for the page's calls waiting for a retry only (none: no read).
      const waiting = calls.filter(waitsForRetry).map((c) => c.id);
      const reasons = new Map(waiting.length ? (await retryReasonsByCallIds(deps.db, account.id, waiting)).map((r, i) => [waiting[i], r]) : []);
      const rows = calls.map((c): CallRecordSource => ({
        ...c,
        ...names,
        phoneNumber: numberDialled(c),
        primaryPhoneNumber: c.phoneNumber,
        versionId: c.promptVersionId,
        recordingUrl: recordingUrlOf(deps, c),
        retryReason: reasons.get(c.id) ?? null,
        consent:
          c.consentSource === null || c.consentAt === null
            ? null
            : { source: c.consentSource, timestamp: c.consentAt, text: c.consentText, reference: c.consentReference },
      }));
      return { rows, last: calls.length < EXPORT_PAGE_ROWS };
    },
  };
}
