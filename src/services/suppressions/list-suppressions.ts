// Use case: the account's do-not-call list, newest first, in offset pages like the other lists.
import type { AppDeps } from '../../deps.ts';
import { suppressionNumber } from '../../domain/suppressions.ts';
import type { Account, Prisma, Suppression } from '../../generated/prisma/client.ts';
import {
  offsetOf,
  pageIssues,
  pageRequest,
  pagination,
  SUPPRESSIONS_PAGE,
  throwIfIssues,
  type PageArgs,
  type Pagination,
} from '../pagination.ts';

export interface SuppressionFilter {
  /** One number, in any form the phone rules read; one they refuse matches nothing. */
  phoneNumber?: string | null;
}

const ORDER: Prisma.SuppressionOrderByWithRelationInput[] = [{ createdAt: 'desc' }, { phoneNumber: 'asc' }];

export async function listSuppressions(
  deps: AppDeps,
  account: Account,
  input: SuppressionFilter & PageArgs,
): Promise<{ items: Suppression[]; pagination: Pagination }> {
  throwIfIssues(pageIssues(input, SUPPRESSIONS_PAGE));
  const req = pageRequest(input, SUPPRESSIONS_PAGE);
  const where: Prisma.SuppressionWhereInput = { accountId: account.id };
  if (input.phoneNumber != null) {
    const r = suppressionNumber(input.phoneNumber);
    if ('reason' in r) return { items: [], pagination: pagination(req, 0) };
    where.phoneNumber = r.number;
  }
  const [items, total] = await Promise.all([
    deps.db.prisma.suppression.findMany({ where, orderBy: ORDER, skip: offsetOf(req), take: req.limit }),
    deps.db.prisma.suppression.count({ where }),
  ]);
  return { items, pagination: pagination(req, total) };
}
