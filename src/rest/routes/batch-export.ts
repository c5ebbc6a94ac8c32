// GET /call-batches/{batch_id}/results.csv: the batch's results as a streamed CSV file, with the
// JSON results route's filters (no page or limit: the file holds every matching call). The use
// case checks the batch and takes an export slot before the response starts, so 404, 422 and 429
// come in the contract's error forms; the body is rest/results-csv-stream.ts.
import type { RestRoute, RouteInput } from '../router.ts';
import { QueryReader } from '../query-params.ts';
import { CALL_STATUSES } from '../../domain/call-state.ts';
import { TRANSCRIPT_STATUS_FILTERS } from '../../services/calls/list-batch-calls.ts';
import { openResultsExport } from '../../services/batches/export-batch-results.ts';
import type { ResultFilter } from '../../services/batches/batch-results.ts';
import { bearerToken } from '../../services/auth/api-keys.ts';
import { resultsCsvStream } from '../results-csv-stream.ts';
import { exportCells, OPTIONAL_CSV_COLUMNS, resultsCsvHeader, type OptionalCsvColumn } from '../results-csv.ts';
import { withDialAudits } from '../../services/batches/export-dial-audits.ts';
import { oneOfStrings } from '../openapi/json-schema.ts';
import { CALL_RECORD_FIELDS } from '../../services/representations.ts';
import { callRecordExample } from '../openapi/examples.ts';
import { resultFilterParams } from './batches-read.ts';

const BASE = '/api/v1/public';

function exportFilter({ query }: RouteInput): ResultFilter & { include: OptionalCsvColumn[] } {
  const q = new QueryReader(query);
  const outcome = q.string('outcome');
  const status = q.oneOf('status', CALL_STATUSES);
  const transcriptStatus = q.oneOf('transcript_status', TRANSCRIPT_STATUS_FILTERS);
  const include = q.oneOf('include', OPTIONAL_CSV_COLUMNS);
  q.done();
  return { outcome, status, transcriptStatus, include: include ? [include] : [] };
}

/** A download name made of the id's safe characters only (ids are `sched_<hex>` anyway). */
const fileName = (batchId: string) => `${batchId.replace(/[^A-Za-z0-9_-]/g, '').slice(0, 64) || 'batch'}-results.csv`;

export const batchExportRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: `${BASE}/call-batches/:batch_id/results.csv`,
    doc: {
      operationId: 'exportBatchResultsCsv',
      tag: 'Calls',
      summary: "A batch's calls with their AI results as one CSV file, streamed",
      description:
        'Every call matching the filters (no paging: `page` and `limit` are ignored, like any unknown parameter), in submission order. Every page of 200 calls after the first ' +
        "spends one unit of the account's rate limit; a file cut short (budget spent, or EXPORT_MAX_SECONDS) ends " +
        'with a broken transfer, never as a shorter valid file. 429 also when the account or the server runs too many exports.',
      query: [
        ...resultFilterParams,
        {
          name: 'include',
          description:
            "`dial_audit`: one more column after the call record's, the call's dial audit as a JSON array (the items of GET …/calls/{call_id}/dial-audit; at most 50 per call). Not part of the original contract",
          schema: oneOfStrings(OPTIONAL_CSV_COLUMNS),
        },
      ],
      file: {
        mediaType: 'text/csv',
        description: 'A header of the call record fields, then one line per call (RFC 4180, CRLF); formula-like cells start with a quote',
        example: resultsCsvHeader() + exportCells([CALL_RECORD_FIELDS.map((k) => callRecordExample[k])]),
      },
      errors: ['NOT_FOUND'],
    },
    async stream(input, ctx) {
      const { include, ...filter } = exportFilter(input);
      const opened = await openResultsExport(ctx.deps, input.account, input.params.batch_id, filter, {
        apiKey: ctx.isAdmin ? null : (bearerToken(ctx.request.headers.get('authorization')) ?? ''),
      });
      const exp = include.includes('dial_audit') ? withDialAudits(ctx.deps, input.account.id, opened) : opened;
      const body = resultsCsvStream(exp, {
        extraColumns: include,
        signal: ctx.request.signal,
        maxMs: ctx.deps.config.EXPORT_MAX_SECONDS * 1000,
        maxIdleMs: ctx.deps.config.EXPORT_IDLE_SECONDS * 1000,
        abortConnection: ctx.scope.abortConnection,
        // The request's log line is written when the file starts; what happens later names the same request.
        logger: ctx.deps.logger.child({ component: 'export', requestId: ctx.scope.requestId, accountId: input.account.id }),
      });
      return new Response(body, {
        status: 200,
        headers: {
          'content-type': 'text/csv; charset=utf-8',
          'content-disposition': `attachment; filename="${fileName(input.params.batch_id)}"`,
          // Tenant data: neither a browser nor a proxy keeps a copy.
          'cache-control': 'no-store',
        },
      });
    },
  },
];
