// The account's do-not-call list: a paged query and two mutations over the use cases in
// services/suppressions/.
import { builder } from '../builder.ts';
import { PaginationType } from './batch-queries.ts';
import type { Suppression } from '../../generated/prisma/client.ts';
import { SUPPRESSIONS_PAGE } from '../../services/pagination.ts';
import { MAX_SUPPRESSIONS_PER_REQUEST } from '../../domain/limits.ts';
import { listSuppressions, MAX_SUPPRESSIONS_OFFSET, type SuppressionList } from '../../services/suppressions/list-suppressions.ts';
import { addSuppressions, type AddSuppressionsResult } from '../../services/suppressions/add-suppressions.ts';
import { removeSuppression } from '../../services/suppressions/remove-suppression.ts';

const SuppressionType = builder.objectRef<Suppression>('Suppression').implement({
  description: 'A number on the do-not-call list: refused at create, never dialled',
  fields: (t) => ({
    phoneNumber: t.exposeString('phoneNumber', { description: 'E.164' }),
    reason: t.exposeString('reason', { nullable: true }),
    source: t.exposeString('source', {
      description: '`api` (an API key, REST or GraphQL), `cli` (the operator token), or `call:<call_id>` for an opt-out',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const SuppressionPage = builder.objectRef<SuppressionList>('SuppressionPage').implement({
  fields: (t) => ({
    items: t.field({ type: [SuppressionType], resolve: (p) => p.items }),
    pagination: t.field({ type: PaginationType, resolve: (p) => p.pagination }),
    nextCursor: t.exposeString('nextCursor', {
      nullable: true,
      description: 'Pass as `cursor` for the next page (any depth); null on the last page',
    }),
  }),
});

const AddSuppressionsResultType = builder.objectRef<AddSuppressionsResult>('AddSuppressionsResult').implement({
  fields: (t) => ({
    added: t.exposeInt('added', { description: 'Numbers newly put on the list' }),
    alreadyListed: t.exposeInt('alreadyListed', { description: 'Distinct numbers of the request that were listed already' }),
  }),
});

builder.queryFields((t) => ({
  suppressions: t.field({
    type: SuppressionPage,
    description: "The account's do-not-call list, newest first",
    args: {
      phoneNumber: t.arg.string({ description: 'Only this number (any form the phone rules read)' }),
      page: t.arg.int({
        defaultValue: 1,
        description: `1-indexed; pages reach the first ${MAX_SUPPRESSIONS_OFFSET} numbers (read further with cursor)`,
      }),
      limit: t.arg.int({ defaultValue: SUPPRESSIONS_PAGE.defaultLimit, description: `Page size, at most ${SUPPRESSIONS_PAGE.maxLimit}` }),
      cursor: t.arg.string({ description: "A page's nextCursor: the page after it, at any depth (page stays 1)" }),
    },
    resolve: async (_root, args, ctx) => listSuppressions(ctx.deps, await ctx.account(), args),
  }),
}));

builder.mutationFields((t) => ({
  addSuppressions: t.field({
    type: AddSuppressionsResultType,
    description: `Puts numbers on the do-not-call list (at most ${MAX_SUPPRESSIONS_PER_REQUEST} a request); a number already listed is not an error`,
    args: {
      phoneNumbers: t.arg.stringList({ required: true }),
      reason: t.arg.string(),
    },
    resolve: async (_root, args, ctx) =>
      addSuppressions(ctx.deps, await ctx.account(), { phoneNumbers: args.phoneNumbers, reason: args.reason, source: ctx.isAdmin ? 'cli' : 'api' }),
  }),
  removeSuppression: t.field({
    type: 'String',
    description: 'Takes a number off the list and answers it in E.164; NOT_FOUND when it is not on it',
    args: { phoneNumber: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => removeSuppression(ctx.deps, await ctx.account(), args.phoneNumber),
  }),
}));
