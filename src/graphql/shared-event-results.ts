// A live value is executed once for every subscriber that asked for it in the same words (document,
// operation and variables), not once per subscriber: the hub hands the same event object to all
// the subscribers of a batch (events/hub.ts), and those are all of the batch's account, while the
// subscription types' fields depend on the event alone. An error-free result is also encoded
// once: Yoga's SSE writer uses that JSON (`result.stringify`), and a WebSocket operation's
// error-free values are written to its socket straight from here, the JSON wrapped in the
// operation's `next` message (byte for byte what graphql-ws would send), without passing each one
// through the plugins' result hooks and graphql-ws (3-4 times the cost of the socket write for a
// batch watched by 1,000 sockets). A result with errors still takes that path, in its turn.
// Results live as long as their event does (weak maps).
import { createSourceEventStream, execute, type DocumentNode, type ExecutionArgs, type ExecutionResult } from 'graphql';

type Results = WeakMap<DocumentNode, Map<string, ExecutionResult | Promise<ExecutionResult>>>;

export type SubscribeFn = (args: ExecutionArgs) => Promise<AsyncIterable<ExecutionResult> | ExecutionResult>;

/** Where a WebSocket operation's values go (graphql/ws.ts sets it on the operation's context). */
export interface SocketOperation {
  /** The operation's id, as the client chose it. */
  id: string;
  /** Writes one message; resolves once the socket took it, rejects once the socket is gone. */
  send(message: string): Promise<void>;
}

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

type Taker<T> = { resolve: (step: IteratorResult<T>) => void; reject: (e: unknown) => void };

/**
 * The operation's values, error-free ones written to its socket here. The returned stream (read by
 * the plugins and graphql-ws) yields only the results with errors, and ends with the source; the
 * value after one of those is taken only once the stream is asked for more (graphql-ws has sent
 * it), so messages keep their order. The next value is taken once the socket took the last one:
 * a slow socket makes the source keep only its newest (events/queue.ts).
 */
function pumpToSocket<T>(source: AsyncIterable<unknown>, map: (event: unknown) => ExecutionResult | Promise<ExecutionResult>, socket: SocketOperation): AsyncIterableIterator<T> {
  const it = source[Symbol.asyncIterator]();
  const prefix = `{"id":${JSON.stringify(socket.id)},"type":"next","payload":`;
  let stopped = false;
  /** The stream's next() under way. */
  let taker: Taker<T> | null = null;
  /** A step for the stream that came before it asked. */
  let offered: { step?: IteratorResult<T>; error?: unknown; release: () => void } | null = null;
  /** Lets the pump on once the stream asks again (or ends). */
  let inStream: (() => void) | null = null;

  const deliver = (t: Taker<T>, o: NonNullable<typeof offered>) => {
    if (o.step) t.resolve(o.step);
    else t.reject(o.error);
    inStream = o.release;
  };
  const offer = (step: IteratorResult<T> | undefined, error?: unknown) =>
    new Promise<void>((release) => {
      const t = taker;
      taker = null;
      if (t) deliver(t, { step, error, release });
      else offered = { step, error, release };
    });
  const finish = () => {
    stopped = true;
    void it.return?.();
    inStream?.();
    offered?.release();
    inStream = offered = null;
    taker?.resolve({ value: undefined, done: true });
    taker = null;
  };

  void (async () => {
    let failure: { error: unknown } | undefined;
    try {
      for (;;) {
        const step = await it.next();
        if (step.done || stopped) break;
        const result = await map(step.value);
        const json = encodings.get(result);
        if (!json) await offer({ value: result as T, done: false });
        else if (!(await socket.send(prefix + json() + '}').then(() => true, () => false))) break;
      }
    } catch (error) {
      failure = { error };
    }
    if (stopped || !failure) return finish();
    await offer(undefined, failure.error);
  })();

  return {
    next() {
      inStream?.();
      inStream = null;
      if (stopped) return Promise.resolve({ value: undefined, done: true });
      return new Promise((resolve, reject) => {
        const o = offered;
        offered = null;
        if (o) deliver({ resolve, reject }, o);
        else taker = { resolve, reject };
      });
    },
    async return() {
      finish();
      return { value: undefined, done: true };
    },
    async throw(error) {
      finish();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/** A subscribe function for Yoga whose events are executed once per event, document, operation and variables. */
export function sharedEventResults(): SubscribeFn {
  const byEvent = new WeakMap<object, Results>();

  function resultOf(event: unknown, args: ExecutionArgs, asked: string): ExecutionResult | Promise<ExecutionResult> {
    const run = () => {
      const result = execute({ ...args, rootValue: event });
      return result instanceof Promise ? result.then(withEncoding) : withEncoding(result);
    };
    if (typeof event !== 'object' || event === null) return run();
    let byDocument = byEvent.get(event);
    if (!byDocument) byEvent.set(event, (byDocument = new WeakMap()));
    let results = byDocument.get(args.document);
    if (!results) byDocument.set(args.document, (results = new Map()));
    let result = results.get(asked);
    if (!result) results.set(asked, (result = run()));
    return result;
  }

  return async (args) => {
    const source = await createSourceEventStream(args);
    if (!(Symbol.asyncIterator in source)) return source;
    // Once per subscription; variables are bounded by the body's size.
    const asked = `${args.operationName ?? ''}\n${JSON.stringify(args.variableValues ?? null)}`;
    const result = (event: unknown) => resultOf(event, args, asked);
    const socket = (args.contextValue as { socketOperation?: SocketOperation } | undefined)?.socketOperation;
    return socket ? pumpToSocket(source, result, socket) : mapEvents(source, result);
  };
}
