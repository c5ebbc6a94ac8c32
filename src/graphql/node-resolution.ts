// `node(id:)` / `nodes(ids:)`: a global id is the object's own id (see domain/global-ids.ts); the
// prefix picks the type, the request's loaders fetch the calling account's rows, one statement
// per kind. Malformed, unknown, foreign and missing ids all answer null, so nothing tells them apart.
import { brandWithType } from '@pothos/core';
import { AppError } from '../errors.ts';
import { MAX_NODE_IDS, nodeKindOf, type NodeKind } from '../domain/global-ids.ts';
import type { GraphQLContext } from './context.ts';
import { HEAVY_TEXT_COMPLEXITY } from './types/field-costs.ts';

export const NODE_TYPENAMES: Record<NodeKind, string> = {
  batch: 'CallBatch',
  call: 'Call',
  agent: 'Agent',
  promptVersion: 'PromptVersion',
};

const KIND_OF_TYPENAME = new Map(Object.entries(NODE_TYPENAMES).map(([kind, typename]) => [typename, kind as NodeKind]));

export interface DecodedId {
  typename: string;
  id: string;
}

/** Relay `encodeGlobalID`: the id unchanged. */
export const encodeGlobalId = (_typename: string, id: bigint | number | string): string => String(id);

/** Relay `decodeGlobalID`: never throws; an id of no node type decodes to an empty typename. */
export function decodeGlobalId(globalId: string): DecodedId {
  const kind = nodeKindOf(globalId);
  return kind ? { typename: NODE_TYPENAMES[kind], id: globalId } : { typename: '', id: '' };
}

async function loadNode(ctx: GraphQLContext, decoded: DecodedId): Promise<object | null> {
  const kind = KIND_OF_TYPENAME.get(decoded.typename);
  if (!kind) return null;
  const row = await ctx.loaders[kind].load(decoded.id);
  // The Node interface resolves the concrete type from this brand.
  if (row) brandWithType(row, decoded.typename as never);
  return row;
}

export async function resolveNode(ctx: GraphQLContext, id: DecodedId): Promise<object | null> {
  await ctx.account();
  return loadNode(ctx, id);
}

export async function resolveNodes(ctx: GraphQLContext, ids: readonly DecodedId[]): Promise<(object | null)[]> {
  if (ids.length > MAX_NODE_IDS) {
    throw new AppError('BAD_REQUEST', `nodes(ids:) takes at most ${MAX_NODE_IDS} ids; ${ids.length} were given`);
  }
  await ctx.account();
  return Promise.all(ids.map((id) => loadNode(ctx, id)));
}

/**
 * Cost of `nodes(ids:)`: its selection once per id asked, so aliases can't multiply it unseen, plus
 * a heavy text per id: the loaders read whole rows (a call's transcript, a prompt version's prompt,
 * ~130 KB) whatever is selected, so a query carries about a page of them, as elsewhere.
 */
export function nodesComplexity(args: { ids?: unknown }): { field: number; multiplier: number } {
  const ids = Array.isArray(args.ids) ? Math.max(1, args.ids.length) : 1;
  return { field: 1 + ids * HEAVY_TEXT_COMPLEXITY, multiplier: ids };
}
