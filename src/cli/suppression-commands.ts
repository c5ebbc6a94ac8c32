// The CLI's do-not-call list commands, on the account's GraphQL list (acting as the account, so
// entries get source `cli`): add numbers, import a CSV file in requests of the add limit, list and
// remove.
import { charLength, MAX_SUPPRESSION_REASON_LENGTH, MAX_SUPPRESSIONS_PER_ACCOUNT, MAX_SUPPRESSIONS_PER_REQUEST } from '../domain/limits.ts';
import { csvFileText, int, list, need, type Command, type CommandIo, type Flags } from './command.ts';
import { suppressionsFromCsv, type SuppressionRow } from './suppressions-csv.ts';
import type { GraphQLTransport } from './transport.ts';

type Gql = GraphQLTransport['request'];
interface AddResult {
  added: number;
  alreadyListed: number;
}

const ADD = `mutation($phoneNumbers: [String!]!, $reason: String) { addSuppressions(phoneNumbers: $phoneNumbers, reason: $reason) { added alreadyListed } }`;
/** The largest page the list serves. */
const LIST_PAGE = 200;

function reasonOf(f: Flags): string | undefined {
  if (typeof f.reason !== 'string') return undefined;
  if (charLength(f.reason, MAX_SUPPRESSION_REASON_LENGTH) > MAX_SUPPRESSION_REASON_LENGTH) {
    throw new Error(`--reason must have at most ${MAX_SUPPRESSION_REASON_LENGTH} characters`);
  }
  return f.reason;
}

/** A request's `phoneNumbers.N` problem names the file line of its number N. */
function onLines(message: string, chunk: SuppressionRow[]): string {
  return message.replace(/phoneNumbers\.(\d+)/g, (m, i: string) => (chunk[Number(i)] ? `${m} (CSV line ${chunk[Number(i)].line})` : m));
}

async function sendChunks(gql: Gql, account: string, rows: SuppressionRow[], reason: string | undefined, io: CommandIo): Promise<AddResult> {
  const total: AddResult = { added: 0, alreadyListed: 0 };
  for (let start = 0; start < rows.length; start += MAX_SUPPRESSIONS_PER_REQUEST) {
    const chunk = rows.slice(start, start + MAX_SUPPRESSIONS_PER_REQUEST);
    let r: AddResult;
    try {
      r = (await gql<{ addSuppressions: AddResult }>(ADD, { phoneNumbers: chunk.map((c) => c.number), reason }, account)).addSuppressions;
    } catch (e) {
      io.progress(null);
      const message = onLines(e instanceof Error ? e.message : String(e), chunk);
      throw new Error(`${message}\n(stopped at CSV line ${chunk[0].line}: ${total.added} added and ${total.alreadyListed} already listed before it)`);
    }
    total.added += r.added;
    total.alreadyListed += r.alreadyListed;
    io.progress(`suppressions: ${start + chunk.length}/${rows.length} sent, ${total.added} added, ${total.alreadyListed} already listed`);
  }
  io.progress(null);
  return total;
}

interface ListPage {
  items: unknown[];
  pagination: { page: number; total: number };
  nextCursor: string | null;
}

const LIST = `query($phoneNumber: String, $page: Int, $limit: Int, $cursor: String) {
  suppressions(phoneNumber: $phoneNumber, page: $page, limit: $limit, cursor: $cursor) {
    items { phoneNumber reason source createdAt } pagination { page total } nextCursor } }`;

const readPage = (gql: Gql, account: string, phoneNumber: string | null, from: { page?: number; cursor?: string }) =>
  gql<{ suppressions: ListPage }>(LIST, { phoneNumber, limit: LIST_PAGE, ...from }, account).then((d) => d.suppressions);

/** Every page from `cursor` (or the first) to the last, a JSON line per number: one page held at a time. */
async function streamAll(read: (from: { cursor?: string }) => Promise<ListPage>, cursor: string | undefined, io: CommandIo): Promise<undefined> {
  let written = 0;
  for (let next: string | undefined = cursor; ;) {
    const d = await read(next !== undefined ? { cursor: next } : {});
    if (d.items.length) io.out(d.items.map((i) => JSON.stringify(i)).join('\n') + '\n');
    written += d.items.length;
    io.progress(`suppressions: ${written}/${d.pagination.total} written`);
    if (d.nextCursor === null) break;
    next = d.nextCursor;
  }
  io.progress(null);
  io.note(`${written} numbers`);
  return undefined;
}

export const suppressionCommands: Record<string, Command> = {
  'suppressions add': {
    usage: "suppressions add --account ID --number N[,N…] [--reason R]   (the account's do-not-call list; at most 1,000 numbers)",
    examples: ['suppressions add --account acc_… --number +14155550150,+14155550151 --reason "asked not to be called"'],
    run: (gql, _a, f) =>
      gql<{ addSuppressions: AddResult }>(
        ADD,
        { phoneNumbers: list(need(f.number, 'number')), reason: reasonOf(f) },
        need(f.account, 'account'),
      ).then((d) => d.addSuppressions),
  },
  'suppressions import': {
    usage: 'suppressions import --account ID --csv FILE [--reason R]   (a phone_number column, or the first column; sent 1,000 at a time)',
    examples: ['suppressions import --account acc_… --csv do-not-call.csv --reason "imported list"'],
    async run(gql, _a, f, io) {
      const account = need(f.account, 'account');
      const reason = reasonOf(f);
      const file = suppressionsFromCsv(csvFileText(f.csv, 'csv'));
      if (file.rows.length > MAX_SUPPRESSIONS_PER_ACCOUNT) {
        throw new Error(`The file has ${file.rows.length} numbers; an account's list holds at most ${MAX_SUPPRESSIONS_PER_ACCOUNT}`);
      }
      for (const r of file.rejected) io.note(`line ${r.line}: phone_number: ${r.message} (rejected)`);
      const sent = file.rows.length ? await sendChunks(gql, account, file.rows, reason, io) : { added: 0, alreadyListed: 0 };
      return { ...sent, rejected: file.rejected.length, duplicateRows: file.duplicates };
    },
  },
  'suppressions list': {
    usage:
      'suppressions list --account ID [--number N] [--page N | --cursor C | --all]   (200 a page, newest first; --cursor reads the page after ' +
      "another's next cursor, at any depth; --all writes every page, a JSON line per number, as it is read)",
    examples: [
      'suppressions list --account acc_…',
      'suppressions list --account acc_… --number +14155550150',
      'suppressions list --account acc_… --all',
    ],
    async run(gql, _a, f, io) {
      const account = need(f.account, 'account');
      const page = int(f.page, 'page');
      const cursor = typeof f.cursor === 'string' ? f.cursor : undefined;
      if (page !== undefined && (cursor !== undefined || f.all === true))
        throw new Error('--page is not for --cursor or --all: they read on from a cursor');
      const phoneNumber = typeof f.number === 'string' ? f.number : null;
      const read = (from: { page?: number; cursor?: string }) => readPage(gql, account, phoneNumber, from);
      if (f.all === true) return streamAll(read, cursor, io);
      const d = await read(cursor !== undefined ? { cursor } : { page: page ?? 1 });
      if (d.nextCursor !== null) {
        // Page numbers reach only the first 10,000 numbers; the cursor goes on to the end.
        io.note(`page ${d.pagination.page}: ${d.items.length} of ${d.pagination.total}; next page: --cursor ${d.nextCursor}`);
      }
      return d.items;
    },
  },
  'suppressions remove': {
    usage: 'suppressions remove --account ID --number N',
    examples: ['suppressions remove --account acc_… --number +14155550151'],
    run: (gql, _a, f) =>
      gql<{ removeSuppression: string }>(
        `mutation($n: String!) { removeSuppression(phoneNumber: $n) }`,
        { n: need(f.number, 'number') },
        need(f.account, 'account'),
      ).then((d) => ({ removed: d.removeSuppression })),
  },
};
