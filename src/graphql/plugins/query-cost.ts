// What a GraphQL operation may cost, decided before any resolver runs:
// - parser token cap (a document can't make the parser itself the bottleneck);
// - Pothos complexity ≈ objects fetched: leaves are free, every object costs 1, a paged field
//   multiplies its selection by the page size it asks for (limit / pageSize / first / last);
//   plus depth (field nesting) and breadth (fields selected) limits;
// - introspection, which Pothos does not measure: bounded list nesting and a few roots per operation.
// The same numbers drive Pothos's own per-resolver check in builder.ts, which stays as a backstop.
import {
  getNamedType,
  GraphQLError,
  GraphQLList,
  GraphQLNonNull,
  isLeafType,
  Kind,
  parse,
  type DocumentNode,
  type ExecutionArgs,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLOutputType,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { complexityFromQuery, ComplexityErrorKind, type ComplexityResult } from '@pothos/plugin-complexity';
import type { Config } from '../../config.ts';
import { AppError } from '../../errors.ts';

/** Pagination arguments, in the order their values are read. */
const PAGE_ARGS = ['limit', 'pageSize', 'first', 'last'] as const;
/** Largest page any list of the contract serves; a larger request is refused by the field itself. */
export const MAX_PAGE_SIZE = 200;
/** Page size assumed when a paged field is asked without one (the largest default page in the contract). */
export const DEFAULT_PAGE_SIZE = 100;
/** Estimated length of a list that is neither paged nor inside a page (relations such as call history). */
export const UNPAGED_LIST_SIZE = 10;
/** Lists of a page or connection: the parent field already multiplied by the page size. */
const PAGE_ITEM_FIELDS: ReadonlySet<string> = new Set(['items', 'edges', 'nodes']);

/** Introspection fields returning lists; nesting them multiplies (types × fields × args …). */
const INTROSPECTION_LISTS: ReadonlySet<string> = new Set([
  'types',
  'fields',
  'args',
  'inputFields',
  'interfaces',
  'possibleTypes',
  'enumValues',
  'directives',
]);
/** The standard introspection query (GraphiQL, codegen) nests types → fields → args. */
export const MAX_INTROSPECTION_LIST_NESTING = 3;
export const MAX_INTROSPECTION_ROOTS = 10;

function isList(type: GraphQLOutputType): boolean {
  if (type instanceof GraphQLNonNull) return isList(type.ofType);
  return type instanceof GraphQLList;
}

function isPaged<Context>(field: GraphQLField<unknown, Context, Record<string, unknown>>): boolean {
  return field.args.some((a) => (PAGE_ARGS as readonly string[]).includes(a.name));
}

function requestedPageSize(args: Record<string, unknown>): number | undefined {
  for (const name of PAGE_ARGS) {
    const v = args[name];
    if (typeof v === 'number' && Number.isFinite(v)) return Math.min(MAX_PAGE_SIZE, Math.max(1, Math.trunc(v)));
  }
  return undefined;
}

/** Pothos `fieldComplexity` for every field without its own `complexity` option. */
export function fieldCost<Context>(
  args: Record<string, unknown>,
  _ctx: Context,
  field: GraphQLField<unknown, Context, Record<string, unknown>>,
): number | { field: number; multiplier: number } {
  if (isLeafType(getNamedType(field.type))) return 0;
  if (isPaged(field)) return { field: 1, multiplier: requestedPageSize(args) ?? DEFAULT_PAGE_SIZE };
  if (isList(field.type)) return { field: 1, multiplier: PAGE_ITEM_FIELDS.has(field.name) ? 1 : UNPAGED_LIST_SIZE };
  return 1;
}

export interface QueryLimits {
  complexity: number;
  depth: number;
  breadth: number;
}

export function queryLimits(config: Config): QueryLimits {
  return { complexity: config.GRAPHQL_MAX_COMPLEXITY, depth: config.GRAPHQL_MAX_DEPTH, breadth: config.GRAPHQL_MAX_BREADTH };
}

export function queryTooComplex(message: string, measured: Partial<ComplexityResult>, limits: QueryLimits): AppError {
  const details = (['complexity', 'depth', 'breadth'] as const)
    .filter((k) => measured[k] !== undefined)
    .map((k) => `${k}: ${measured[k]} (max ${limits[k]})`);
  return new AppError('QUERY_TOO_COMPLEX', message, details);
}

/** Pothos `complexityError`: the same clear AppError as the pre-execution check. */
export function complexityError(kind: ComplexityErrorKind, result: ComplexityResult, limits: QueryLimits): AppError {
  return queryTooComplex(refusalMessage(kind, result, limits), result, limits);
}

function refusalMessage(kind: ComplexityErrorKind, r: ComplexityResult, limits: QueryLimits): string {
  switch (kind) {
    case ComplexityErrorKind.Depth:
      return `Query is too deep: depth ${r.depth} exceeds the maximum of ${limits.depth}`;
    case ComplexityErrorKind.Breadth:
      return `Query selects too many fields: ${r.breadth} exceeds the maximum of ${limits.breadth}`;
    default:
      return `Query is too complex: estimated cost ${r.complexity} exceeds the maximum of ${limits.complexity}; request smaller pages or fewer nested lists`;
  }
}

function exceeded(r: ComplexityResult, limits: QueryLimits): ComplexityErrorKind | null {
  if (r.depth > limits.depth) return ComplexityErrorKind.Depth;
  if (r.breadth > limits.breadth) return ComplexityErrorKind.Breadth;
  if (r.complexity > limits.complexity) return ComplexityErrorKind.Complexity;
  return null;
}

function selectedOperation(document: DocumentNode, operationName?: string | null): OperationDefinitionNode | undefined {
  const ops = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  return operationName ? ops.find((o) => o.name?.value === operationName) : ops.length === 1 ? ops[0] : undefined;
}

/** Introspection problems of one operation (list nesting, number of roots), or null. */
function introspectionProblem(op: OperationDefinitionNode, fragments: Map<string, FragmentDefinitionNode>): string | null {
  let roots = 0;
  let problem: string | null = null;
  const walk = (set: SelectionSetNode, inIntrospection: boolean, lists: number, seen: Set<string>): void => {
    for (const sel of set.selections) {
      if (problem) return;
      if (sel.kind === Kind.FIELD) {
        const name = (sel as FieldNode).name.value;
        const root = name === '__schema' || name === '__type';
        if (root && ++roots > MAX_INTROSPECTION_ROOTS) {
          problem = `Introspection: at most ${MAX_INTROSPECTION_ROOTS} __schema/__type fields per operation`;
          return;
        }
        const inside = inIntrospection || root;
        const nesting = inside && INTROSPECTION_LISTS.has(name) ? lists + 1 : lists;
        if (nesting > MAX_INTROSPECTION_LIST_NESTING) {
          problem = `Introspection lists nested more than ${MAX_INTROSPECTION_LIST_NESTING} deep`;
          return;
        }
        if (sel.selectionSet) walk(sel.selectionSet, inside, nesting, seen);
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        walk(sel.selectionSet, inIntrospection, lists, seen);
      } else {
        const name = sel.name.value;
        const fragment = fragments.get(name);
        // A fragment spread inside itself is a validation error; never loop on it here.
        if (fragment && !seen.has(name)) walk(fragment.selectionSet, inIntrospection, lists, new Set(seen).add(name));
      }
    }
  };
  walk(op.selectionSet, false, 0, new Set());
  return problem;
}

/** The refusal for an operation that costs too much, or null (also when it can't be measured: execution reports that). */
export function costRefusal(args: Pick<ExecutionArgs, 'schema' | 'document' | 'operationName' | 'variableValues' | 'contextValue'>, limits: QueryLimits): AppError | null {
  const op = selectedOperation(args.document, args.operationName);
  if (!op) return null;
  const fragmentDefs = args.document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION);
  const fragments = new Map(fragmentDefs.map((f) => [f.name.value, f]));
  const introspection = introspectionProblem(op, fragments);
  if (introspection) return new AppError('QUERY_TOO_COMPLEX', introspection);
  let result: ComplexityResult;
  try {
    result = complexityFromQuery(
      { kind: Kind.DOCUMENT, definitions: [op, ...fragmentDefs] },
      { schema: args.schema, ctx: (args.contextValue ?? {}) as object, variables: (args.variableValues ?? {}) as Record<string, unknown> },
    );
  } catch {
    return null;
  }
  const kind = exceeded(result, limits);
  return kind ? complexityError(kind, result, limits) : null;
}

/** Brackets nested deeper than this are refused before parsing (the parser and validator recurse). */
export const MAX_DOCUMENT_NESTING = 64;

/** True when `{`, `[` or `(` nest deeper than `max` in GraphQL source (strings and comments skipped). */
export function documentNestsDeeperThan(source: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '#') {
      while (i < source.length && source[i] !== '\n' && source[i] !== '\r') i++;
    } else if (c === '"') {
      if (source.startsWith('"""', i)) {
        const end = source.indexOf('"""', i + 3);
        i = end < 0 ? source.length : end + 2;
      } else {
        for (i++; i < source.length && source[i] !== '"' && source[i] !== '\n'; i++) if (source[i] === '\\') i++;
      }
    } else if (c === '{' || c === '[' || c === '(') {
      if (++depth > max) return true;
    } else if (c === '}' || c === ']' || c === ')') depth--;
  }
  return false;
}

/** Envelop/Yoga plugin: size and nesting caps at parse, cost refusal before execute and subscribe. */
export function useQueryCost(config: Config): Plugin {
  const limits = queryLimits(config);
  const maxTokens = config.GRAPHQL_MAX_TOKENS;
  return {
    onParse({ setParseFn }) {
      setParseFn((source, options) => {
        const text = typeof source === 'string' ? source : source.body;
        if (documentNestsDeeperThan(text, MAX_DOCUMENT_NESTING)) {
          throw new GraphQLError(`Syntax Error: Document nests deeper than ${MAX_DOCUMENT_NESTING} levels. Parsing aborted.`);
        }
        return parse(source, { ...options, maxTokens });
      });
    },
    onExecute({ args, setResultAndStopExecution }) {
      const refusal = costRefusal(args, limits);
      if (refusal) setResultAndStopExecution({ errors: [refusal] });
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const refusal = costRefusal(args, limits);
      if (refusal) setResultAndStopExecution({ errors: [refusal] });
    },
  };
}
