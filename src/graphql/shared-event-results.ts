// A live value is executed once for every subscriber that asked for it in the same words (document,
// operation and variables), not once per subscriber: the hub hands the same event object to all
// the subscribers of a batch (events/hub.ts), and those are all of the batch's account, while the
// subscription types' fields depend on the event alone. An error-free result is also encoded
// once: Yoga's SSE writer uses that JSON (`result.stringify`), and a WebSocket operation's
// error-free values are written straight to its socket (socket-pump.ts). Results live as long as
// their event does (weak maps).
import { createSourceEventStream, execute, type DocumentNode, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { pumpToSocket, type SocketOperation } from './socket-pump.ts';
import { LatestByKeyQueue } from '../events/queue.ts';

type Results = WeakMap<DocumentNode, Map<string, ExecutionResult | Promise<ExecutionResult>>>;

export type SubscribeFn = (args: ExecutionArgs) => Promise<AsyncIterable<ExecutionResult> | ExecutionResult>;

/** The JSON of an error-free shared result, made once; undefined for any other. */
const encodings = new WeakMap<ExecutionResult, () => string>();

function withEncoding(result: ExecutionResult): ExecutionResult {
  // Yoga masks a result with errors into a copy of its own; only an error-free one is shared as is.
  if (result.errors?.length) return result;
  let json: string | undefined;
  const encoded = () => (json ??= JSON.stringify(result));
  encodings.set(result, encoded);
  Object.defineProperty(result, 'stringify', { value: (r: ExecutionResult) => (r === result ? encoded() : JSON.stringify(r)) });
  return result;
}

function mapEvents<T>(source: AsyncIterable<unknown>, map: (event: unknown) => T | Promise<T>): AsyncIterableIterator<T> {
  const it = source[Symbol.asyncIterator]();
  return {
    async next() {
      const step = await it.next();
      return step.done ? { value: undefined, done: true } : { value: await map(step.value), done: false };
    },
    async return() {
      await it.return?.();
      return { value: undefined, done: true };
    },
    async throw(error) {
      await it.return?.();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

// No closure is made per event and subscriber: tsx keeps function names, at a property write each.
function run(event: unknown, args: ExecutionArgs): ExecutionResult | Promise<ExecutionResult> {
  const result = execute({ ...args, rootValue: event });
  return result instanceof Promise ? result.then(withEncoding) : withEncoding(result);
}

/** A subscribe function for Yoga whose events are executed once per event, document, operation and variables. */
export function sharedEventResults(): SubscribeFn {
  const byEvent = new WeakMap<object, Results>();

  function resultOf(event: unknown, args: ExecutionArgs, asked: string): ExecutionResult | Promise<ExecutionResult> {
    if (typeof event !== 'object' || event === null) return run(event, args);
    let byDocument = byEvent.get(event);
    if (!byDocument) byEvent.set(event, (byDocument = new WeakMap()));
    let results = byDocument.get(args.document);
    if (!results) byDocument.set(args.document, (results = new Map()));
    let result = results.get(asked);
    if (!result) results.set(asked, (result = run(event, args)));
    return result;
  }

  return async (args) => {
    const source = await createSourceEventStream(args);
    if (!(Symbol.asyncIterator in source)) return source;
    // Once per subscription; variables are bounded by the body's size.
    const asked = `${args.operationName ?? ''}\n${JSON.stringify(args.variableValues ?? null)}`;
    const result = (event: unknown) => resultOf(event, args, asked);
    const socket = (args.contextValue as { socketOperation?: SocketOperation } | undefined)?.socketOperation;
    return socket && source instanceof LatestByKeyQueue ? pumpToSocket(source, result, socket, (r) => encodings.get(r)) : mapEvents(source, result);
  };
}
