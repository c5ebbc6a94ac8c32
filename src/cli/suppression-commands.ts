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

export const suppressionCommands: Record<string, Command> = {
  'suppressions add': {
    usage: 'suppressions add --account ID --number N[,N…] [--reason R]   (the account\'s do-not-call list; at most 1,000 numbers)',
    examples: ['suppressions add --account acc_… --number +14155550150,+14155550151 --reason "asked not to be called"'],
    run: (gql, _a, f) =>
      gql<{ addSuppressions: AddResult }>(ADD, { phoneNumbers: list(need(f.number, 'number')), reason: reasonOf(f) }, need(f.account, 'account')).then(
        (d) => d.addSuppressions,
      ),
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
    usage: 'suppressions list --account ID [--number N] [--page N]   (200 a page, newest first)',
    examples: ['suppressions list --account acc_…', 'suppressions list --account acc_… --number +14155550150'],
    async run(gql, _a, f, io) {
      const page = int(f.page, 'page') ?? 1;
      const d = await gql<{ suppressions: { items: unknown[]; pagination: { total: number; hasMore: boolean } } }>(
        `query($phoneNumber: String, $page: Int, $limit: Int) { suppressions(phoneNumber: $phoneNumber, page: $page, limit: $limit) {
          items { phoneNumber reason source createdAt } pagination { total hasMore } } }`,
        { phoneNumber: typeof f.number === 'string' ? f.number : null, page, limit: LIST_PAGE },
        need(f.account, 'account'),
      );
      if (d.suppressions.pagination.hasMore) io.note(`page ${page}: ${d.suppressions.items.length} of ${d.suppressions.pagination.total} (--page ${page + 1} for more)`);
      return d.suppressions.items;
    },
  },
  'suppressions remove': {
    usage: 'suppressions remove --account ID --number N',
    examples: ['suppressions remove --account acc_… --number +14155550151'],
    run: (gql, _a, f) =>
      gql<{ removeSuppression: string }>(`mutation($n: String!) { removeSuppression(phoneNumber: $n) }`, { n: need(f.number, 'number') }, need(f.account, 'account')).then(
        (d) => ({ removed: d.removeSuppression }),
      ),
  },
};
