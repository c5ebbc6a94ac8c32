// The CLI's batch commands: create from a CSV file (the dashboard's reader, so one file works in
// both), list, show, watch the live counters, and export the results as CSV (the REST results
// document and rest/results-csv.ts, the CSV shape GET …/results.csv writes too).
import fs from 'node:fs';
import { print } from 'graphql';
import { contactsFromCsv, lineOfDetail } from '../csv/contacts-csv.ts';
import { restOperations } from '../rest/operations.ts';
import type { CallRecordSource } from '../services/representations.ts';
import { resultsCsvHeader, resultsCsvRows } from '../rest/results-csv.ts';
import { BATCH_LIST_STATUS_FILTERS } from '../services/batches/list-batches.ts';
import { progressLine, type BatchCounters } from './progress.ts';
import { arg, csvFileText, int, list, need, type Command, type CommandIo, type Flags } from './command.ts';
import type { GraphQLTransport } from './transport.ts';
import { parseWindowSpec } from './window-spec.ts';
import { ID_PREFIX } from '../domain/ids.ts';

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
  const agent = need(f.agent, 'agent');
  const version = need(f.version, 'version');
  return {
    // An id or a name, as REST's agent_id / agent_name.
    ...(isId(agent, ID_PREFIX.agent) ? { agentId: agent } : { agentName: agent }),
    ...(isId(version, ID_PREFIX.promptVersion) ? { versionId: version } : { versionName: version }),
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

/** A request-validation refusal (GraphQL's camelCase paths) as the file's problems: by CSV line, in line order, snake_case. */
function onLines(message: string, lines: number[]): string {
  const [heading, ...details] = message.split('\n');
  if (heading !== REQUEST_VALIDATION) return message;
  const problems = details.map((d) => {
    const detail = d.trim();
    const line = lineOfDetail(detail, lines);
    const text = snakePath(line === null ? detail : detail.replace(/^contacts\.\d+\.?/, ''));
    return { line: line ?? 0, text: line === null ? `  ${text}` : `  line ${line}: ${text}` };
  });
  problems.sort((a, b) => a.line - b.line);
  return ['The server refused the batch (nothing was created):', ...problems.map((p) => p.text)].join('\n');
}

/** The heading of GraphQL's request-validation errors (src/errors.ts). */
const REQUEST_VALIDATION = 'Missing required parameter';
/** `retry.maxAttempts: …` -> `retry.max_attempts: …`: the path as REST and the CSV name it. */
const snakePath = (detail: string) => detail.replace(/^[^:]+/, (path) => path.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));
const isId = (value: string, prefix: string) => value.startsWith(prefix);

/** `batches start|pause|resume|cancel <batch-id>`: the REST routes' GraphQL mutations. */
function batchOperation(op: 'start' | 'pause' | 'resume' | 'cancel', what: string): Command {
  return {
    usage: `batches ${op} <batch-id> --account ID   (${what})`,
    examples: [`batches ${op} sched_… --account acc_…`],
    run: (gql, a, f) =>
      gql<Record<string, unknown>>(
        `mutation($id: ID!) { ${op}Batch(id: $id) { id ${COUNTERS} startedAt completedAt } }`,
        { id: arg(a, 0, 'batch-id') },
        need(f.account, 'account'),
      ),
  };
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
      'batches create --account ID --agent AGENT --version VERSION --csv FILE [--did DID_ID] [--concurrency N] [--start immediate|manual] [--max-attempts N [--retry-on no_answer,busy,failed,voicemail,voicemail_left] [--retry-delay SECONDS]] [--expires-at ISO] [--calling-window "09:00-20:00 mon-fri recipient"] [--watch]   (AGENT and VERSION: an id or a name; a timezone column gives a contact its own zone)',
    examples: [
      'batches create --account acc_… --agent "Demo Agent" --version v1 --csv contacts.csv --start manual',
      'batches create --account acc_… --agent agt-… --version pmt-… --csv contacts.csv --max-attempts 3 --retry-on no_answer,busy --retry-delay 600 --watch',
      'batches create --account acc_… --agent "Demo Agent" --version v1 --csv contacts.csv --calling-window "09:00-20:00 mon-fri recipient" --expires-at 2030-01-31T18:00:00Z',
    ],
    async run(gql, _a, f, io) {
      const account = need(f.account, 'account');
      if (f.watch === true && f.start === 'manual') {
        throw new Error(
          '--watch follows a batch that starts now; a manual batch waits: create it, then `batches start <batch-id> --account …` and `batches watch <batch-id> --account …`',
        );
      }
      const file = contactsFromCsv(csvFileText(f.csv, 'csv'));
      if (file.contacts.length === 0) {
        for (const issue of file.issues) io.note(`line ${issue.line}: ${issue.field}: ${issue.message} (left out)`);
        throw new Error('No row of the file can be sent');
      }
      const query = `mutation($input: CreateCallBatchInput!) { createCallBatch(input: $input) {
        batchId status totalContacts acceptedContacts rejectedContacts validationErrors { index externalId field message } } }`;
      let created: Created;
      try {
        created = (await gql<{ createCallBatch: Created }>(query, { input: createInput(f, file.contacts) }, account)).createCallBatch;
      } catch (e) {
        throw new Error(onLines(e instanceof Error ? e.message : String(e), file.lines));
      }
      // The file's own problems and the server's rejections, in line order.
      const problems = [
        ...file.issues.map((i) => ({ line: i.line, text: `${i.field}: ${i.message} (left out)` })),
        ...created.validationErrors.map((v) => ({ line: file.lines[v.index - 1] ?? 0, text: `${v.field}: ${v.message} (rejected)` })),
      ].sort((a, b) => a.line - b.line);
      for (const p of problems) io.note(`line ${p.line || '?'}: ${p.text}`);
      const { validationErrors: _shown, ...summary } = created;
      if (f.start === 'manual')
        io.note(`batch ${created.batchId} waits: start it with npm run cli -- batches start ${created.batchId} --account ${account}`);
      if (f.watch !== true) return { ...summary, leftOut: file.issues.length };
      io.note(`batch ${created.batchId}: ${created.acceptedContacts} calls accepted`);
      return watch(io, account, created.batchId);
    },
  },
  'batches start': batchOperation('start', 'a manual batch begins dialling'),
  'batches pause': batchOperation('pause', 'no new calls; calls in flight finish'),
  'batches resume': batchOperation('resume', 'a paused batch dials again'),
  'batches cancel': batchOperation('cancel', 'calls not yet dialled end cancelled'),
  'batches list': {
    usage: `batches list --account ID [--status ${BATCH_LIST_STATUS_FILTERS.join('|')}]`,
    examples: ['batches list --account acc_…', 'batches list --account acc_… --status active'],
    run: (gql, _a, f) =>
      gql(
        `query($filter: CallBatchFilter) { batches(filter: $filter, limit: 50) { items { id status totalContacts queued inProgress completed failed cancelled createdAt } } }`,
        { filter: typeof f.status === 'string' ? { status: f.status } : null },
        need(f.account, 'account'),
      ).then((d) => (d as { batches: { items: unknown[] } }).batches.items),
  },
  'batches show': {
    usage: 'batches show <batch-id> --account ID',
    examples: ['batches show sched_… --account acc_…'],
    run: (gql, a, f) =>
      gql(
        `query($id: ID!) { batch(id: $id) { id agentId versionId startMode scheduledAt concurrency ${COUNTERS} createdAt startedAt completedAt retry { maxAttempts on delaySeconds } expiresAt callingWindow { start end days timezone } enforcedCallingWindow { start end days timezone } } }`,
        { id: arg(a, 0, 'batch-id') },
        need(f.account, 'account'),
      ),
  },
  'batches watch': {
    usage: 'batches watch <batch-id> --account ID   (live counters until the batch ends)',
    examples: ['batches watch sched_… --account acc_…'],
    run: (_gql, a, f, io) => watch(io, need(f.account, 'account'), arg(a, 0, 'batch-id')),
  },
  'batches export': {
    usage: 'batches export <batch-id> --account ID [--format csv] [--out FILE]   (the results as CSV: the call record columns)',
    examples: ['batches export sched_… --account acc_… --out results.csv'],
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
