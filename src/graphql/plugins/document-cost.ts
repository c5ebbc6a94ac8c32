// Measures a GraphQL document before graphql-js validates it, in time linear in the document's
// size: each (selection set, type) pair is measured once and reused wherever a fragment is spread,
// so a fragment spreading the next one twice, 30 levels deep, costs 30 steps, not 2^30. The
// numbers follow @pothos/plugin-complexity (leaf 0 by our fieldCost, object 1, lists multiply;
// introspection fields count 1 and are not descended) so refusals match its per-resolver backstop.
import {
  getArgumentValues,
  getNamedType,
  isInterfaceType,
  isObjectType,
  Kind,
  visit,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';

export interface DocumentCost {
  /** Estimated objects fetched (Pothos complexity). */
  complexity: number;
  /** Field nesting (Pothos depth). */
  depth: number;
  /** Fields selected, fragments expanded (Pothos breadth). */
  breadth: number;
  /**
   * Estimated database lookups: each root field and each paged field is one, times the page or
   * list size of every field around it. Complexity counts rows; this counts round trips, which
   * run one after another (a hundred aliases of a one-row page cost a hundred queries).
   */
  lookups: number;
  /** Every field the validator will look at, introspection and unknown fields included, fragments expanded. */
  selections: number;
  /** `__schema` / `__type` fields, fragments expanded. */
  introspectionRoots: number;
  /** Deepest nesting of introspection list fields (types → fields → args …). */
  introspectionLists: number;
}

const ZERO: DocumentCost = { complexity: 0, depth: 0, breadth: 0, lookups: 0, selections: 0, introspectionRoots: 0, introspectionLists: 0 };

/** Arguments that make a field a paged list, read from the database page by page. */
const PAGE_ARGS: ReadonlySet<string> = new Set(['limit', 'pageSize', 'first', 'last']);

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

type ComplexityOption = number | { field?: number; multiplier?: number };
/**
 * A field's complexity function. `reads` names the only arguments it looks at (it ignores the
 * context), so a measure that called it depends on no other variable; without `reads` the
 * measure depends on everything and is never reused.
 */
export type ComplexityFunction = ((args: Record<string, unknown>, ctx: unknown, field: GraphQLField<unknown, unknown>) => ComplexityOption) & {
  reads?: ReadonlySet<string>;
};
type FieldComplexity = ComplexityOption | ComplexityFunction;

interface Walk {
  schema: GraphQLSchema;
  fragments: Map<string, FragmentDefinitionNode>;
  variables: Record<string, unknown>;
  context: unknown;
  measured: Map<SelectionSetNode, Map<string, DocumentCost>>;
  active: Set<SelectionSetNode>;
  /** Variables a complexity function was given through an argument it reads; null once one read them all. */
  read: Set<string> | null;
}

function add(a: DocumentCost, b: DocumentCost): DocumentCost {
  return {
    complexity: a.complexity + b.complexity,
    depth: Math.max(a.depth, b.depth),
    breadth: a.breadth + b.breadth,
    lookups: a.lookups + b.lookups,
    selections: a.selections + b.selections,
    introspectionRoots: a.introspectionRoots + b.introspectionRoots,
    introspectionLists: Math.max(a.introspectionLists, b.introspectionLists),
  };
}

/** Argument values as the resolver would see them; arguments validation would refuse count as absent. */
function argumentsOf(field: GraphQLField<unknown, unknown>, node: FieldNode, variables: Record<string, unknown>): Record<string, unknown> {
  try {
    return getArgumentValues(field, node, variables);
  } catch {
    return {};
  }
}

/** Records the variables a complexity function may see: those in the arguments it reads. */
function noteVariables(w: Walk, fn: ComplexityFunction, node: FieldNode): void {
  if (!w.read) return;
  if (!fn.reads) {
    w.read = null;
    return;
  }
  for (const arg of node.arguments ?? []) {
    if (!fn.reads.has(arg.name.value)) continue;
    const read = w.read;
    visit(arg.value, { [Kind.VARIABLE]: (v) => void read.add(v.name.value) });
  }
}

function complexityOf(w: Walk, field: GraphQLField<unknown, unknown>, node: FieldNode): { cost: number; multiplier: number } {
  let option = field.extensions?.complexity as FieldComplexity | undefined;
  if (typeof option === 'function') {
    noteVariables(w, option, node);
    option = option(argumentsOf(field, node, w.variables), w.context, field);
  }
  if (typeof option === 'number') return { cost: option, multiplier: 1 };
  return { cost: option?.field ?? 1, multiplier: Math.max(option?.multiplier ?? 1, 0) };
}

/** The type a field returns, or undefined for a field the schema doesn't have (validation reports it). */
function fieldDefinition(w: Walk, parent: GraphQLNamedType | undefined, name: string): GraphQLField<unknown, unknown> | undefined {
  if (name === '__schema') return w.schema.getQueryType() ? ({ type: w.schema.getType('__Schema') } as GraphQLField<unknown, unknown>) : undefined;
  if (name === '__type') return { type: w.schema.getType('__Type') } as GraphQLField<unknown, unknown>;
  if (!parent || !(isObjectType(parent) || isInterfaceType(parent))) return undefined;
  return parent.getFields()[name] as GraphQLField<unknown, unknown> | undefined;
}

function isRootType(w: Walk, type: GraphQLNamedType | undefined): boolean {
  return !!type && (type === w.schema.getQueryType() || type === w.schema.getMutationType() || type === w.schema.getSubscriptionType());
}

function measureField(w: Walk, node: FieldNode, parent: GraphQLNamedType | undefined): DocumentCost {
  const name = node.name.value;
  const def = fieldDefinition(w, parent, name);
  const type = def ? getNamedType(def.type) : undefined;
  const sub = node.selectionSet ? measureSet(w, node.selectionSet, type) : ZERO;
  const inIntrospection = parent?.name.startsWith('__') ?? false;
  const own = {
    selections: 1 + sub.selections,
    introspectionRoots: (name === '__schema' || name === '__type' ? 1 : 0) + sub.introspectionRoots,
    introspectionLists: (inIntrospection && INTROSPECTION_LISTS.has(name) ? 1 : 0) + sub.introspectionLists,
  };
  // Pothos: introspection and unknown fields cost 1 and are not descended.
  if (name.startsWith('__') || !def) return { complexity: 1, depth: 1, breadth: 1, lookups: 0, ...own };
  const { cost, multiplier } = complexityOf(w, def, node);
  const lookup = isRootType(w, parent) || def.args.some((a) => PAGE_ARGS.has(a.name)) ? 1 : 0;
  return {
    complexity: cost + (node.selectionSet ? sub.complexity * multiplier : 0),
    depth: 1 + sub.depth,
    breadth: 1 + sub.breadth,
    lookups: lookup + sub.lookups * multiplier,
    ...own,
  };
}

function measureSet(w: Walk, set: SelectionSetNode, type: GraphQLNamedType | undefined): DocumentCost {
  const key = type?.name ?? '';
  const known = w.measured.get(set)?.get(key);
  if (known) return known;
  // A fragment cycle is a validation error; count it as nothing here and let validation say so.
  if (w.active.has(set)) return ZERO;
  w.active.add(set);
  let total = ZERO;
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      total = add(total, measureField(w, selection, type));
    } else {
      const fragment = selection.kind === Kind.FRAGMENT_SPREAD ? w.fragments.get(selection.name.value) : selection;
      if (!fragment) continue;
      const condition = fragment.typeCondition ? (w.schema.getType(fragment.typeCondition.name.value) ?? undefined) : type;
      total = add(total, measureSet(w, fragment.selectionSet, condition));
    }
  }
  w.active.delete(set);
  if (!w.measured.has(set)) w.measured.set(set, new Map());
  w.measured.get(set)!.set(key, total);
  return total;
}

export interface DocumentMeasure {
  /** The operation that would run (named, or the only one), if there is one. */
  operation?: DocumentCost;
  /** Fields the validator walks: every operation and fragment definition, used or not, expanded. */
  selections: number;
  /**
   * The variables whose values this measure depended on (sorted), or null when it may depend on
   * anything (a complexity function without `reads`): the key under which it may be reused.
   */
  variables: string[] | null;
}

export function measureDocument(
  schema: GraphQLSchema,
  document: DocumentNode,
  opts: { operationName?: string | null; variables?: Record<string, unknown> | null; context?: unknown } = {},
): DocumentMeasure {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const w: Walk = {
    schema,
    fragments,
    variables: opts.variables ?? {},
    context: opts.context ?? {},
    measured: new Map(),
    active: new Set(),
    read: new Set(),
  };
  const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
  const selected = opts.operationName
    ? operations.find((o) => o.name?.value === opts.operationName)
    : operations.length === 1
      ? operations[0]
      : undefined;
  let selections = 0;
  let operation: DocumentCost | undefined;
  for (const d of document.definitions) {
    if (d.kind === Kind.OPERATION_DEFINITION) {
      const cost = measureSet(w, d.selectionSet, schema.getRootType(d.operation) ?? undefined);
      if (d === selected) operation = cost;
      selections += cost.selections;
    } else if (d.kind === Kind.FRAGMENT_DEFINITION) {
      selections += measureSet(w, d.selectionSet, schema.getType(d.typeCondition.name.value) ?? undefined).selections;
    }
  }
  return { operation, selections, variables: w.read ? [...w.read].sort() : null };
}
