// The statements a piece of work sent to the driver, and their plans as they ran: list tests assert
// that a page reads one index range, with no sort or sequential scan of the table.
import type { Database } from '../../src/db/client.ts';
import { withSqlTransaction } from '../../src/db/sql-transaction.ts';

export type Ran = { text: string; values: unknown[]; settings: string[] };

/**
 * Statements (text and parameters) the driver ran while `fn` did that match `pattern`, each with the
 * `SET LOCAL`s its transaction ran before it (PGlite's transactions too), to be explained as they ran.
 */
export async function statementsOf(db: Database, pattern: RegExp, fn: () => Promise<unknown>): Promise<Ran[]> {
  const seen: Ran[] = [];
  type Query = (...args: unknown[]) => Promise<unknown>;
  const recorder = (settings: string[]) =>
    function (this: unknown, original: Query, args: unknown[]) {
      const [first, second] = args as [string | { text: string; values?: unknown[] }, unknown[] | undefined];
      const text = typeof first === 'string' ? first : first.text;
      if (/^SET LOCAL/.test(text)) settings.push(text);
      else if (pattern.test(text)) seen.push({ text, values: (typeof first === 'string' ? second : first.values) ?? [], settings: [...settings] });
      return original.apply(this, args);
    };
  const target = (db.pglite ?? db.pool) as unknown as {
    query: Query;
    transaction?: (fn: (tx: { query: Query }) => Promise<unknown>) => Promise<unknown>;
  };
  const { query, transaction } = target;
  const record = recorder([]);
  target.query = function (this: unknown, ...args: unknown[]) {
    return record.call(this, query, args);
  };
  if (transaction) {
    target.transaction = function (this: unknown, fn) {
      return transaction.call(this, (tx) => {
        const inTx = recorder([]);
        return fn({ ...tx, query: (...args: unknown[]) => inTx.call(tx, tx.query.bind(tx), args) });
      });
    };
  }
  try {
    await fn();
  } finally {
    target.query = query;
    if (transaction) target.transaction = transaction;
  }
  return seen;
}

export type PlanNode = {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Actual Rows'?: number;
  Alias?: string;
  Plans?: PlanNode[];
};
const nodesOf = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodesOf)];

/** Every node of the statement's plan, explained under the settings it ran with (`analyze`: run it too). */
export async function planOf(db: Database, s: Ran, analyze = false): Promise<PlanNode[]> {
  const [row] = await withSqlTransaction(db, async (tx) => {
    for (const setting of s.settings) await tx.query(setting);
    return tx.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (${analyze ? 'ANALYZE, ' : ''}FORMAT JSON) ${s.text}`, s.values);
  });
  const json = typeof row['QUERY PLAN'] === 'string' ? JSON.parse(row['QUERY PLAN']) : row['QUERY PLAN'];
  return nodesOf((json as { Plan: PlanNode }[])[0].Plan);
}
