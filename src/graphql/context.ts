import type { ApiDeps } from '../http/app-services.ts';
import type { Account } from '../generated/prisma/client.ts';
import { AppError } from '../errors.ts';
import { bearerToken } from '../services/auth/api-keys.ts';
import { authenticateRequest } from '../http/authenticate-request.ts';
import type { RequestScope } from '../http/request-scope.ts';
import { isAdminToken } from '../services/auth/admin-token.ts';
import { createLoaders, type Loaders } from './loaders.ts';
import { oneSlotPerRequest, type ScanSlots } from '../services/batches/scan-slots.ts';

export interface GraphQLContext {
  deps: ApiDeps;
  request: Request;
  /** This request's own state: client address, authentication, budget, vetted input. */
  scope: RequestScope;
  /** The API key's account; throws UNAUTHENTICATED / FORBIDDEN. Resolved once per operation. */
  account(): Promise<Account>;
  /** True when the bearer token is the operator's ADMIN_TOKEN. */
  isAdmin: boolean;
  /** This request's loaders of the account's batches, calls, agents and prompt versions by id. */
  loaders: Loaders;
  /** The process's outcome-read slots, one of them shared by all of this request's reads (services/batches/scan-slots.ts). */
  outcomeReads: ScanSlots;
  /**
   * Set once query-cost.ts measured this operation, as executed, within the limits: Pothos's
   * per-resolver check (builder.ts) then has nothing to add. Executions that skipped the plugin keep it.
   */
  costChecked?: boolean;
}

/** The operator acts on one account's catalogue with the admin token plus this header (the CLI does). */
export const ACT_AS_HEADER = 'x-act-as-account';

async function actAs(deps: ApiDeps, accountId: string): Promise<Account> {
  const account = await deps.db.prisma.account.findUnique({ where: { id: accountId } });
  if (!account) throw new AppError('NOT_FOUND', `Account ${accountId} not found`);
  return account;
}

export function createContext(deps: ApiDeps, request: Request, scope: RequestScope): GraphQLContext {
  const token = bearerToken(request.headers.get('authorization'));
  const isAdmin = isAdminToken(deps, token);
  const actAsId = isAdmin ? request.headers.get(ACT_AS_HEADER) : null;
  // API keys go through the failed-attempt and per-account budgets (memoised per request);
  // the operator acting for an account does not spend that account's budget.
  const account = () => (actAsId ? (scope.account ??= actAs(deps, actAsId)) : authenticateRequest(deps, scope, token));
  return { deps, request, scope, isAdmin, account, loaders: createLoaders(deps.db, account), outcomeReads: oneSlotPerRequest(deps.outcomeReads) };
}
