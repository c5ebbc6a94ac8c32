// A batch's results read for a CSV export, a keyset page at a time (seq after the last one read,
// so page 500 costs what page 1 does). The export holds one of the process's export slots from
// before its first read until close(), and every page after the first spends one unit of the
// account's per-minute budget (the request's own unit pays for the first): an export costs what
// paging the JSON results route at its largest page size costs.
import type { AppDeps } from '../../deps.ts';
import { AppError } from '../../errors.ts';
import type { Account } from '../../generated/prisma/client.ts';
import { apiKeyAuthenticates } from '../auth/api-keys.ts';
import { accountBudgetKey, accountRateLimited, type RateLimiters } from '../auth/rate-limit.ts';
import { callFilterIssues, callWhere, CALL_ORDER } from '../calls/list-batch-calls.ts';
import { recordingUrlOf } from '../calls/recording-url.ts';
import { BATCH_RESULTS_PAGE, throwIfIssues } from '../pagination.ts';
import { numberDialled, type CallRecordSource } from '../representations.ts';
import { outcomeWhere, type ResultFilter } from './batch-results.ts';
import type { ScanSlots } from './scan-slots.ts';
import { batchScope } from './get-batch.ts';

/** Rows per page: the JSON route's largest page, so a unit of budget buys the same rows on both. */
export const EXPORT_PAGE_ROWS = BATCH_RESULTS_PAGE.maxLimit;

export type ExportDeps = AppDeps & { rateLimiters: RateLimiters; exports: ScanSlots };

export interface ResultsExport {
  /** The next rows in submission order; `last` once no more follow. Throws RATE_LIMITED when the budget is spent. */
  nextPage(): Promise<{ rows: CallRecordSource[]; last: boolean }>;
  /** Frees the slot; safe to call more than once, and nothing is read after it. */
  close(): void;
  /** Pages read so far (for logs and tests). */
  readonly pagesRead: number;
}

const CALL_COLUMNS = {
  id: true, seq: true, batchId: true, externalId: true, phoneNumber: true, dialedNumber: true, agentId: true,
  status: true, transcriptStatus: true, durationSeconds: true, answerDurationSeconds: true, timestamp: true,
  createdAt: true, completedAt: true, hangupBy: true, disconnectReason: true, summary: true, outcomes: true,
  recordingAvailable: true, llmTranscript: true, promptVersionId: true, attempts: true, nextAttemptAt: true,
  timezone: true,
} as const;

type BatchNames = { agentName: string; versionName: string; voice: string };

async function batchNames(deps: ExportDeps, batchId: string): Promise<BatchNames> {
  const b = await deps.db.prisma.batch.findUniqueOrThrow({
    where: { id: batchId },
    select: { voice: true, agent: { select: { name: true } }, promptVersion: { select: { name: true } } },
  });
  return { agentName: b.agent.name, versionName: b.promptVersion.name, voice: b.voice };
}

async function callsAfter(deps: ExportDeps, batchId: string, filter: ResultFilter, afterSeq: number) {
  const prisma = deps.db.prisma;
  if (filter.outcome == null) {
    return prisma.call.findMany({ where: { ...callWhere(batchId, filter), seq: { gt: afterSeq } }, orderBy: CALL_ORDER, take: EXPORT_PAGE_ROWS, select: CALL_COLUMNS });
  }
  const where = outcomeWhere(batchId, { ...filter, outcome: filter.outcome });
  const ids = await prisma.$queryRaw<{ id: string }[]>`SELECT c.id FROM calls c WHERE ${where} AND c.seq > ${afterSeq} ORDER BY c.seq LIMIT ${EXPORT_PAGE_ROWS}`;
  if (ids.length === 0) return [];
  return prisma.call.findMany({ where: { id: { in: ids.map((r) => r.id) } }, orderBy: CALL_ORDER, select: CALL_COLUMNS });
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
      const rows = calls.map((c): CallRecordSource => ({
        ...c,
        ...names,
        phoneNumber: numberDialled(c),
        versionId: c.promptVersionId,
        recordingUrl: recordingUrlOf(deps, c),
      }));
      return { rows, last: calls.length < EXPORT_PAGE_ROWS };
    },
  };
}
