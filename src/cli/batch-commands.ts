// The CLI's batch commands: create from a CSV file (the dashboard's reader, so one file works in
// both), list, show, watch the live counters, and export the results as CSV (the REST results
// document and rest/results-csv.ts, the CSV shape GET …/results.csv writes too).
import fs from 'node:fs';
import { print } from 'graphql';
import { contactsFromCsv, lineOfDetail } from '../web/contacts-csv.ts';
import { restOperations } from '../rest/operations.ts';
import type { CallRecordSource } from '../services/representations.ts';
import { resultsCsvHeader, resultsCsvRows } from '../rest/results-csv.ts';
import { BATCH_LIST_STATUS_FILTERS } from '../services/batches/list-batches.ts';
import { progressLine, type BatchCounters } from './progress.ts';
import { arg, csvFileText, int, list, need, type Command, type CommandIo, type Flags } from './command.ts';
import type { GraphQLTransport } from './transport.ts';
import { parseWindowSpec } from './window-spec.ts';

const COUNTERS = 'status totalContacts acceptedContacts queued inProgress completed failed cancelled';
const TERMINAL = new Set(['completed', 'cancelled']);
/** The largest results page the API serves. */
const EXPORT_PAGE = 200;

/** Follows the batch's counters until it ends; a line per change, or one redrawn line on a terminal. */
async function watch(io: CommandIo, account: string, batchId: string): Promise<BatchCounters> {
  let last: BatchCounters | undefined;
  const query = `subscription($id: ID!) { batchProgress(batchId: $id) { batchId ${COUNTERS} } }`;
  for await (const event of io.subscribe<{ batchProgress: BatchCounters }>(query, { id: batchId }, account)) {
    last = event.batchProgress;
    io.progress(progressLine(last));
    if (TERMINAL.has(last.status)) break;
  }
  io.progress(null);
  if (!last) throw new Error(`The subscription to ${batchId} ended before any update`);
  return last;
}

function createInput(f: Flags, contacts: unknown[]) {
  const start = typeof f.start === 'string' ? f.start : 'immediate';
  if (start !== 'immediate' && start !== 'manual') throw new Error('--start must be immediate or manual');
  const now = new Date().toISOString();
  return {
    agentId: need(f.agent, 'agent'),
    versionId: need(f.version, 'version'),
    didNumberId: typeof f.did === 'string' ? f.did : undefined,
    concurrency: int(f.concurrency, 'concurrency'),
    startMode: start,
    // Required by the contract even when the batch starts now.
    scheduleDate: now.slice(0, 10),
    scheduleTime: now.slice(11, 16),
    scheduleTimezone: 'UTC',
    interruption: false,
    useAlternateNumber: false,
    contactList: contacts,
    retry: retryInput(f),
    expiresAt: typeof f['expires-at'] === 'string' ? f['expires-at'] : undefined,
    callingWindow: typeof f['calling-window'] === 'string' ? (parseWindowSpec(f['calling-window']) ?? undefined) : undefined,
  };
}

/** --max-attempts [--retry-on a,b] [--retry-delay S]: the batch's retry policy (docs/campaigns.md); the server checks the values. */
function retryInput(f: Flags) {
  const maxAttempts = int(f['max-attempts'], 'max-attempts');
  if (maxAttempts === undefined) {
    if (f['retry-on'] !== undefined || f['retry-delay'] !== undefined) throw new Error('--retry-on and --retry-delay go with --max-attempts');
    return undefined;
  }
  return { maxAttempts, on: list(f['retry-on']), delaySeconds: int(f['retry-delay'], 'retry-delay') };
}

interface Created {
  batchId: string;
  status: string;
  totalContacts: number;
  acceptedContacts: number;
  rejectedContacts: number;
  validationErrors: { index: number; externalId: string; field: string; message: string }[];
}

/** Problems named by CSV line: a `contacts.N…` detail is about the file's line of contact N. */
function onLines(message: string, lines: number[]): string {
  return message
    .split('\n')
    .map((l) => {
      const line = lineOfDetail(l.trim(), lines);
      return line === null ? l : `${l}   (CSV line ${line})`;
    })
    .join('\n');
}

type ResultsPage = { results: { items: CallRecordSource[]; pagination: { hasMore: boolean } } };

/** Writes the batch's results as CSV, a page at a time; returns how many calls it wrote. */
async function exportResults(gql: GraphQLTransport['request'], account: string, batchId: string, write: (text: string) => void): Promise<number> {
  const document = print(restOperations.get('RestBatchResults')!);
  write(resultsCsvHeader());
  let exported = 0;
  for (let page = 1; ; page++) {
    const { results } = await gql<ResultsPage>(document, { batchId, page, limit: EXPORT_PAGE }, account);
    if (results.items.length) write(resultsCsvRows(results.items));
    exported += results.items.length;
    if (!results.pagination.hasMore) return exported;
  }
}

export const batchCommands: Record<string, Command> = {
  'batches create': {
    usage:
      'batches create --account ID --agent AGENT_ID --version VERSION_ID --csv FILE [--did DID_ID] [--concurrency N] [--start immediate|manual] [--max-attempts N [--retry-on no_answer,busy,failed,voicemail] [--retry-delay SECONDS]] [--expires-at ISO] [--calling-window "09:00-20:00 mon-fri recipient"] [--watch]   (a timezone column gives a contact its own zone)',
    async run(gql, _a, f, io) {
      const account = need(f.account, 'account');
      if (f.watch === true && f.start === 'manual') throw new Error('--watch follows a batch that starts now; a manual batch waits for `start` (watch it with batches watch after starting it)');
      const file = contactsFromCsv(csvFileText(f.csv, 'csv'));
      for (const issue of file.issues) io.note(`line ${issue.line}: ${issue.field}: ${issue.message} (left out)`);
      if (file.contacts.length === 0) throw new Error('No row of the file can be sent');
      const query = `mutation($input: CreateCallBatchInput!) { createCallBatch(input: $input) {
        batchId status totalContacts acceptedContacts rejectedContacts validationErrors { index externalId field message } } }`;
      let created: Created;
      try {
        created = (await gql<{ createCallBatch: Created }>(query, { input: createInput(f, file.contacts) }, account)).createCallBatch;
      } catch (e) {
        throw new Error(onLines(e instanceof Error ? e.message : String(e), file.lines));
      }
      for (const v of created.validationErrors) {
        io.note(`line ${file.lines[v.index - 1] ?? '?'}: ${v.field}: ${v.message} (rejected)`);
      }
      const { validationErrors: _shown, ...summary } = created;
      if (f.watch !== true) return { ...summary, leftOut: file.issues.length };
      io.note(`batch ${created.batchId}: ${created.acceptedContacts} calls accepted`);
      return watch(io, account, created.batchId);
    },
  },
  'batches list': {
    usage: `batches list --account ID [--status ${BATCH_LIST_STATUS_FILTERS.join('|')}]`,
    run: (gql, _a, f) =>
      gql(
        `query($filter: CallBatchFilter) { batches(filter: $filter, limit: 50) { items { id status totalContacts queued inProgress completed failed cancelled createdAt } } }`,
        { filter: typeof f.status === 'string' ? { status: f.status } : null },
        need(f.account, 'account'),
      ).then((d) => (d as { batches: { items: unknown[] } }).batches.items),
  },
  'batches show': {
    usage: 'batches show <batch-id> --account ID',
    run: (gql, a, f) =>
      gql(
        `query($id: ID!) { batch(id: $id) { id agentId versionId startMode scheduledAt concurrency ${COUNTERS} createdAt startedAt completedAt retry { maxAttempts on delaySeconds } expiresAt callingWindow { start end days timezone } enforcedCallingWindow { start end days timezone } } }`,
        { id: arg(a, 0, 'batch-id') },
        need(f.account, 'account'),
      ),
  },
  'batches watch': {
    usage: 'batches watch <batch-id> --account ID   (live counters until the batch ends)',
    run: (_gql, a, f, io) => watch(io, need(f.account, 'account'), arg(a, 0, 'batch-id')),
  },
  'batches export': {
    usage: 'batches export <batch-id> --account ID [--format csv] [--out FILE]   (the results as CSV: the call record columns)',
    async run(gql, a, f, io) {
      if (f.format !== undefined && f.format !== 'csv') throw new Error('--format: csv is the only export format');
      const account = need(f.account, 'account');
      const batchId = arg(a, 0, 'batch-id');
      // A file is written beside its name and renamed when complete, so a failed export leaves no half file.
      const partial = typeof f.out === 'string' ? `${f.out}.partial` : null;
      const fd = partial === null ? null : fs.openSync(partial, 'w');
      const write = (text: string) => (fd === null ? io.out(text) : fs.writeSync(fd, text));
      let exported = 0;
      try {
        exported = await exportResults(gql, account, batchId, write);
      } catch (e) {
        if (partial !== null) fs.rmSync(partial, { force: true });
        throw e;
      } finally {
        if (fd !== null) fs.closeSync(fd);
      }
      if (partial !== null) fs.renameSync(partial, f.out as string);
      io.note(`${exported} calls exported${fd === null ? '' : ` to ${f.out}`}`);
      return undefined;
    },
  },
};
