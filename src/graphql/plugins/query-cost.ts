// What a GraphQL operation may cost, decided before any resolver runs:
// - document size, then parser token, comment and nesting caps (a document can't make the parser
//   itself, or what Yoga caches of it, the bottleneck);
// - Pothos complexity ≈ objects fetched: leaves are free, every object costs 1, a paged field
//   multiplies its selection by the page size it asks for (limit / pageSize / first / last);
//   plus depth (field nesting) and breadth (fields selected) limits;
// - introspection, which Pothos does not measure: bounded list nesting and a few roots per operation;
// - the fields graphql-js validation will walk (its overlapping-fields rule is quadratic in them).
// The document is measured by document-cost.ts in linear time and refused before validation runs.
// The same numbers drive Pothos's own per-resolver check in builder.ts, a backstop for executions
// this plugin did not check (an operation it passed is marked, and not measured twice).
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
  type GraphQLField,
  type GraphQLOutputType,
  type GraphQLSchema,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { ComplexityErrorKind, type ComplexityResult } from '@pothos/plugin-complexity';
import type { Config } from '../../config.ts';
import { AppError } from '../../errors.ts';
import { measureDocument, type DocumentCost, type DocumentMeasure } from './document-cost.ts';

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

/** The standard introspection query (GraphiQL, codegen) nests types → fields → args. */
export const MAX_INTROSPECTION_LIST_NESTING = 3;
export const MAX_INTROSPECTION_ROOTS = 10;
/**
 * Fields graphql-js validation may walk per document, fragments expanded. GraphiQL's full
 * introspection query expands to about 450; the cap keeps the quadratic overlapping-fields rule
 * to a few milliseconds.
 */
export const MAX_VALIDATED_SELECTIONS = 1000;

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
// Only the page size counts: a measure is reused for any other argument values (document-cost.ts).
fieldCost.reads = new Set<string>(PAGE_ARGS) as ReadonlySet<string>;

export interface QueryLimits {
  complexity: number;
  depth: number;
  breadth: number;
  lookups: number;
}

export function queryLimits(config: Config): QueryLimits {
  return {
    complexity: config.GRAPHQL_MAX_COMPLEXITY,
    depth: config.GRAPHQL_MAX_DEPTH,
    breadth: config.GRAPHQL_MAX_BREADTH,
    lookups: config.GRAPHQL_MAX_LOOKUPS,
  };
}

export function queryTooComplex(message: string, measured: Partial<ComplexityResult & { lookups: number }>, limits: QueryLimits): AppError {
  const details = (['complexity', 'depth', 'breadth', 'lookups'] as const)
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

function lookupsProblem(r: DocumentCost, limits: QueryLimits): AppError | null {
  if (r.lookups <= limits.lookups) return null;
  return queryTooComplex(
    `Query needs too many database lookups: ${r.lookups} exceeds the maximum of ${limits.lookups}; use fewer root fields or aliases, or fewer paged lists inside lists`,
    { lookups: r.lookups },
    limits,
  );
}

/** The first limit passed; with `shapeOnly`, only those the document alone decides (depth, breadth). */
function exceeded(r: DocumentCost, limits: QueryLimits, shapeOnly = false): ComplexityErrorKind | null {
  if (r.depth > limits.depth) return ComplexityErrorKind.Depth;
  if (r.breadth > limits.breadth) return ComplexityErrorKind.Breadth;
  if (!shapeOnly && r.complexity > limits.complexity) return ComplexityErrorKind.Complexity;
  return null;
}

function introspectionProblem(cost: DocumentCost): string | null {
  if (cost.introspectionRoots > MAX_INTROSPECTION_ROOTS)
    return `Introspection: at most ${MAX_INTROSPECTION_ROOTS} __schema/__type fields per operation`;
  if (cost.introspectionLists > MAX_INTROSPECTION_LIST_NESTING) return `Introspection lists nested more than ${MAX_INTROSPECTION_LIST_NESTING} deep`;
  return null;
}

/**
 * Measures reused per document: documents are shared objects (the REST route table's, Yoga's parse
 * cache), and a measure depends only on the operation and the variables it names
 * (DocumentMeasure.variables), so a route asked again with another id is not walked again.
 */
export interface MeasureCache {
  measure(input: CostInput): DocumentMeasure;
}

/** Operation names, and operation and variable values, kept per document; past it that list starts over. */
const MEASURES_PER_DOCUMENT = 64;

export function createMeasureCache(): MeasureCache {
  const byDocument = new WeakMap<
    DocumentNode,
    { schema: GraphQLSchema; variables: Map<string, string[] | null>; measures: Map<string, DocumentMeasure> }
  >();
  // An absent variable ([]) differs from a null one ([null]): the argument's default applies only to the first.
  const keyOf = (operation: string, names: string[], variables: Record<string, unknown> | null | undefined): string | undefined => {
    try {
      return JSON.stringify([operation, ...names.map((n) => (variables?.[n] === undefined ? [] : [variables[n]]))]);
    } catch {
      return undefined; // a value JSON can't spell (not from a JSON request): measured every time
    }
  };
  return {
    measure(input) {
      const operation = input.operationName ?? '';
      let entry = byDocument.get(input.document);
      if (!entry || entry.schema !== input.schema) {
        entry = { schema: input.schema, variables: new Map(), measures: new Map() };
        byDocument.set(input.document, entry);
      }
      const names = entry.variables.get(operation);
      if (names === null) return measureDocument(input.schema, input.document, input);
      const key = names && keyOf(operation, names, input.variables);
      const known = key === undefined ? undefined : entry.measures.get(key);
      if (known) return known;
      const measured = measureDocument(input.schema, input.document, input);
      if (entry.variables.size >= MEASURES_PER_DOCUMENT) entry.variables.clear();
      entry.variables.set(operation, measured.variables);
      const newKey = measured.variables && keyOf(operation, measured.variables, input.variables);
      if (newKey !== null && newKey !== undefined) {
        if (entry.measures.size >= MEASURES_PER_DOCUMENT) entry.measures.clear();
        entry.measures.set(newKey, measured);
      }
      return measured;
    },
  };
}

export interface CostInput {
  schema: GraphQLSchema;
  document: DocumentNode;
  operationName?: string | null;
  variables?: Record<string, unknown> | null;
  context?: unknown;
}

/**
 * The refusal for a document that costs too much to validate or to run, or null. Linear in the
 * document. With `documentOnly`, only what holds for every request carrying this document text:
 * what depends on the operation picked (in a document of several) or on page sizes given as
 * variables (complexity, lookups) is left to the check at execution.
 */
export function costRefusal(input: CostInput, limits: QueryLimits, cache?: MeasureCache, documentOnly = false): AppError | null {
  const { operation, selections, variables } = cache ? cache.measure(input) : measureDocument(input.schema, input.document, input);
  if (selections > MAX_VALIDATED_SELECTIONS) {
    return new AppError(
      'QUERY_TOO_COMPLEX',
      `Document selects too many fields: ${selections} with fragments expanded exceeds the maximum of ${MAX_VALIDATED_SELECTIONS}`,
    );
  }
  if (!operation) return null;
  if (documentOnly && input.document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION).length > 1) return null;
  const introspection = introspectionProblem(operation);
  if (introspection) return new AppError('QUERY_TOO_COMPLEX', introspection);
  const shapeOnly = documentOnly && variables?.length !== 0;
  const kind = exceeded(operation, limits, shapeOnly);
  if (kind) return complexityError(kind, operation, limits);
  return shapeOnly ? null : lookupsProblem(operation, limits);
}

/** Brackets nested deeper than this are refused before parsing (the parser and validator recurse). */
export const MAX_DOCUMENT_NESTING = 64;

/**
 * Why GraphQL source can't be handed to the parser, or null: `{`, `[` or `(` nested deeper than
 * `maxNesting`, or more than `maxComments` comments. graphql-js counts no comment as a token, yet
 * links each into the document it keeps: 1 MiB of `#` lines took 290 ms to parse and held 45 MiB.
 * One pass, strings skipped.
 */
export function documentSourceProblem(source: string, maxNesting: number, maxComments: number): string | null {
  let depth = 0;
  let comments = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '#') {
      if (++comments > maxComments) return `Syntax Error: Document contains more than ${maxComments} comments. Parsing aborted.`;
      while (i < source.length && source[i] !== '\n' && source[i] !== '\r') i++;
    } else if (c === '"') {
      if (source.startsWith('"""', i)) {
        const end = source.indexOf('"""', i + 3);
        i = end < 0 ? source.length : end + 2;
      } else {
        for (i++; i < source.length && source[i] !== '"' && source[i] !== '\n'; i++) if (source[i] === '\\') i++;
      }
    } else if (c === '{' || c === '[' || c === '(') {
      if (++depth > maxNesting) return `Syntax Error: Document nests deeper than ${maxNesting} levels. Parsing aborted.`;
    } else if (c === '}' || c === ']' || c === ')') depth--;
  }
  return null;
}

/** True when `text` is more than `maxBytes` in UTF-8, counting only when its length leaves a doubt. */
function moreBytesThan(text: string, maxBytes: number): boolean {
  if (text.length > maxBytes) return true;
  return text.length * 3 > maxBytes && Buffer.byteLength(text, 'utf8') > maxBytes;
}

/**
 * A document over GRAPHQL_MAX_DOCUMENT_BYTES: the parser's own error code (like its token cap),
 * answered 400 to every client.
 */
export function documentTooLarge(maxBytes: number): GraphQLError {
  return new GraphQLError(`Document is larger than ${maxBytes} bytes. Parsing aborted.`, {
    extensions: { code: 'GRAPHQL_PARSE_FAILED', http: { status: 400 } },
  });
}

function executionInput(args: ExecutionArgs): CostInput {
  return {
    schema: args.schema,
    document: args.document,
    operationName: args.operationName,
    variables: args.variableValues as Record<string, unknown> | null,
    context: args.contextValue,
  };
}

/** Tells Pothos's per-resolver check (builder.ts) that this operation was measured within the limits. */
function markChecked(context: unknown): void {
  if (context && typeof context === 'object') (context as { costChecked?: boolean }).costChecked = true;
}

/** Envelop/Yoga plugin: size, comment and nesting caps at parse, cost refusal before execute and subscribe. */
export function useQueryCost(config: Config): Plugin {
  const limits = queryLimits(config);
  const measures = createMeasureCache();
  const maxTokens = config.GRAPHQL_MAX_TOKENS;
  const maxBytes = config.GRAPHQL_MAX_DOCUMENT_BYTES;
  return {
    onParse({ params, setParseFn }) {
      // Thrown here, before Yoga's cache looks the text up, so a refused text is never kept.
      if (moreBytesThan(typeof params.source === 'string' ? params.source : params.source.body, maxBytes)) throw documentTooLarge(maxBytes);
      setParseFn((source, options) => {
        const text = typeof source === 'string' ? source : source.body;
        const problem = documentSourceProblem(text, MAX_DOCUMENT_NESTING, maxTokens);
        if (problem) throw new GraphQLError(problem);
        return parse(source, { ...options, maxTokens });
      });
    },
    // Before graphql-js validation, whose cost grows with the document: refused documents are never
    // validated. Yoga caches a validation result per document text, for every later request
    // carrying that text: a refusal that depends on the operation name or the variables (a page
    // size) would refuse them all, so those wait for onExecute, which judges each request's own.
    onValidate({ params, context, setResult }) {
      const request = (context as { params?: { operationName?: string | null; variables?: Record<string, unknown> | null } }).params;
      const refusal = costRefusal(
        { schema: params.schema, document: params.documentAST, operationName: request?.operationName, variables: request?.variables, context },
        limits,
        measures,
        true,
      );
      if (!refusal) return;
      // Yoga answers spec validation errors 200 to application/json clients; this one keeps its 400.
      (refusal.extensions.http as { spec?: boolean }).spec = false;
      setResult([refusal]);
    },
    // Again with the variables as executed (also for documents run without the HTTP pipeline's validation).
    onExecute({ args, setResultAndStopExecution }) {
      const refusal = costRefusal(executionInput(args), limits, measures);
      if (refusal) setResultAndStopExecution({ errors: [refusal] });
      else markChecked(args.contextValue);
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const refusal = costRefusal(executionInput(args), limits, measures);
      if (refusal) setResultAndStopExecution({ errors: [refusal] });
      else markChecked(args.contextValue);
    },
  };
}
