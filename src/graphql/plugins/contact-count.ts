// A create's contact lists are counted against the account's max_batch_size (and the ceiling)
// before graphql-js coerces its variables: coercion copies and checks every item of `contacts`
// (~4 µs each, and a copy of each object), and `contactList` is read in one pass, so a list of
// millions ran the process out of heap before the resolver's check was reached.
import {
  getNamedType,
  getOperationAST,
  isInputObjectType,
  isListType,
  isNonNullType,
  typeFromAST,
  type DocumentNode,
  type ExecutionArgs,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLSchema,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { contactCountProblem } from '../../domain/create-batch-fields.ts';
import { AppError, unprocessable } from '../../errors.ts';
import type { GraphQLContext } from '../context.ts';
import { CONTACT_INPUT_TYPE, CONTACT_LIST_TYPE } from '../types/batch-create.ts';

interface ContactTypes {
  item: GraphQLNamedType;
  list: GraphQLNamedType;
  /** Input objects with a field that is, or leads to, a contact list. */
  holders: ReadonlySet<GraphQLNamedType>;
}

function contactTypes(schema: GraphQLSchema): ContactTypes {
  const item = schema.getType(CONTACT_INPUT_TYPE);
  const list = schema.getType(CONTACT_LIST_TYPE);
  if (!item || !list) throw new Error(`The schema has no ${CONTACT_INPUT_TYPE} or ${CONTACT_LIST_TYPE}`);
  const holders = new Set<GraphQLNamedType>();
  const inputs = Object.values(schema.getTypeMap()).filter(isInputObjectType);
  for (let grew = true; grew;) {
    grew = false;
    for (const type of inputs) {
      if (holders.has(type)) continue;
      const leads = Object.values(type.getFields()).some((f) => {
        const named = getNamedType(f.type);
        return named === list || named === item || holders.has(named);
      });
      if (leads) grew = Boolean(holders.add(type));
    }
  }
  return { item, list, holders };
}

/** The longest contact list in `value` of type `type`: each list's length is read, never its items. */
function longestList(value: unknown, type: GraphQLInputType, t: ContactTypes): number {
  if (value == null) return 0;
  if (isNonNullType(type)) return longestList(value, type.ofType, t);
  if (isListType(type)) {
    const of = isNonNullType(type.ofType) ? type.ofType.ofType : type.ofType;
    if (!isListType(of) && getNamedType(of) === t.item) return Array.isArray(value) ? value.length : 1;
    if (!Array.isArray(value)) return longestList(value, of, t);
    let longest = 0;
    // Only a list of holders gets here (a holder of holders); the schema has none today.
    if (t.holders.has(getNamedType(of))) for (const v of value) longest = Math.max(longest, longestList(v, of, t));
    return longest;
  }
  if (type === t.list) return Array.isArray(value) ? value.length : 0;
  if (!isInputObjectType(type) || !t.holders.has(type) || typeof value !== 'object') return 0;
  let longest = 0;
  for (const field of Object.values(type.getFields())) {
    if (Object.hasOwn(value, field.name)) longest = Math.max(longest, longestList((value as Record<string, unknown>)[field.name], field.type, t));
  }
  return longest;
}

type ListVariables = ReadonlyArray<readonly [name: string, type: GraphQLInputType]>;

/** The operation's variables whose type is or holds a contact list. */
function listVariables(args: ExecutionArgs, t: ContactTypes): ListVariables {
  const found: Array<readonly [string, GraphQLInputType]> = [];
  for (const definition of getOperationAST(args.document, args.operationName)?.variableDefinitions ?? []) {
    const type = typeFromAST(args.schema, definition.type) as GraphQLInputType | undefined;
    const named = type && getNamedType(type);
    if (type && (named === t.item || named === t.list || t.holders.has(named!))) found.push([definition.variable.name.value, type]);
  }
  return found;
}

export function useContactCountLimit(schema: GraphQLSchema): Plugin<GraphQLContext> {
  const types = contactTypes(schema);
  // Yoga hands every request of one text the same parsed document: its variables are sorted once.
  const byDocument = new WeakMap<DocumentNode, Map<string | null | undefined, ListVariables>>();
  /** The longest contact list among the operation's variables; lists written in the document are bounded by its size. */
  const longestVariableList = (args: ExecutionArgs): number => {
    let operations = byDocument.get(args.document);
    if (!operations) byDocument.set(args.document, (operations = new Map()));
    let variables = operations.get(args.operationName);
    if (!variables) operations.set(args.operationName, (variables = listVariables(args, types)));
    let longest = 0;
    for (const [name, type] of variables) longest = Math.max(longest, longestList(args.variableValues?.[name], type, types));
    return longest;
  };
  return {
    async onExecute({ args, setResultAndStopExecution }) {
      const count = longestVariableList(args);
      if (count === 0) return;
      let maxBatchSize: number;
      try {
        maxBatchSize = (await args.contextValue.account()).maxBatchSize;
      } catch (e) {
        // The resolver would refuse the same way, after coercing the whole list.
        if (e instanceof AppError) return setResultAndStopExecution({ errors: [e] });
        throw e;
      }
      const tooMany = contactCountProblem(count, maxBatchSize);
      if (tooMany) setResultAndStopExecution({ data: null, errors: [unprocessable(tooMany)] });
    },
  };
}
