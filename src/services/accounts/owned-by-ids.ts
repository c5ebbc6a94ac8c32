// The account's batches, calls, agents and prompt versions by id, many at once: what the request
// loaders (src/graphql/loaders.ts) batch their lookups into. Foreign and absent ids are alike null.
import type { Database } from '../../db/client.ts';
import type { NodeKind } from '../../domain/global-ids.ts';
import type { Agent, Batch, Call, PromptVersion } from '../../generated/prisma/client.ts';

export interface OwnedRows {
  batch: Batch;
  call: Call;
  agent: Agent;
  promptVersion: PromptVersion;
}

type Finder<K extends NodeKind> = (db: Database, where: { id: { in: string[] }; accountId: string }) => Promise<OwnedRows[K][]>;

const FINDERS: { [K in NodeKind]: Finder<K> } = {
  batch: (db, where) => db.prisma.batch.findMany({ where }),
  call: (db, where) => db.prisma.call.findMany({ where }),
  agent: (db, where) => db.prisma.agent.findMany({ where }),
  promptVersion: (db, where) => db.prisma.promptVersion.findMany({ where }),
};

/** One statement for all the ids; the rows in the order of `ids`, null where the account has none. */
export async function ownedByIds<K extends NodeKind>(
  db: Database,
  accountId: string,
  kind: K,
  ids: readonly string[],
): Promise<(OwnedRows[K] | null)[]> {
  return inIdOrder(ids, await FINDERS[kind](db, { id: { in: [...new Set(ids)] }, accountId }));
}

/** The rows in the order of `ids`, null where none has that id (what a DataLoader's batch function returns). */
export function inIdOrder<T extends { id: string }>(ids: readonly string[], rows: T[]): (T | null)[] {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => byId.get(id) ?? null);
}
