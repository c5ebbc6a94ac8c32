// Use case: one call of the account by its id, with the selection the GraphQL document plans (a
// call's history, say, in the same round). Absent and foreign calls are the same 404.
import type { AppDeps } from '../../deps.ts';
import { notFound } from '../../errors.ts';
import type { Account, Call, Prisma } from '../../generated/prisma/client.ts';

export const CALL_NOT_FOUND = 'Call not found';

export interface CallQuery {
  include?: Prisma.CallInclude;
  select?: Prisma.CallSelect;
}

export async function getCall(deps: AppDeps, account: Account, callId: string, query: CallQuery = {}): Promise<Call> {
  const call = await deps.db.prisma.call.findFirst({ ...query, where: { id: callId, accountId: account.id } });
  if (!call) throw notFound(CALL_NOT_FOUND);
  return call;
}
