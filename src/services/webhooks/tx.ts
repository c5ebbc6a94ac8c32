// The outbox is written inside other use cases' transactions, which are either a Prisma
// interactive transaction or the raw-driver SqlTx of the bulk paths (PGlite has one session, so
// the two can't be mixed). Outbox SQL is written once, with positional parameters, for both.
import type { Prisma } from '../../generated/prisma/client.ts';
import type { SqlTx } from '../../db/sql-transaction.ts';

export type WebhookTx = SqlTx | Prisma.TransactionClient;

export function runSql(tx: WebhookTx) {
  return <T = Record<string, unknown>>(sql: string, params: unknown[]): Promise<T[]> =>
    'query' in tx && typeof tx.query === 'function'
      ? (tx as SqlTx).query<T>(sql, params)
      : (tx as Prisma.TransactionClient).$queryRawUnsafe<T[]>(sql, ...params);
}
