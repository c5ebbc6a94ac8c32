// A WebSocket operation's error-free live values, written to its socket without passing each one
// through the plugins' result hooks and graphql-ws: their JSON, made once for every subscriber
// (shared-event-results.ts), wrapped in the operation's `next` message, byte for byte what
// graphql-ws would send. With 1,000 sockets on a batch a fan-out's CPU went from 36-38 to ~26 ms
// (bench:subscriptions, busy machine), most of the rest being the socket writes themselves. A
// result with errors still takes the plugins' and graphql-ws's path, in its turn.
import type { ExecutionResult } from 'graphql';

/** Where a WebSocket operation's values go (graphql/ws.ts sets it on the operation's context). */
export interface SocketOperation {
  /** The operation's id, as the client chose it. */
  id: string;
  /** Writes one message; resolves true once the socket took it, false once the socket is gone. */
  send(message: string): Promise<boolean>;
}

type Taker<T> = { resolve: (step: IteratorResult<T>) => void; reject: (e: unknown) => void };

/**
 * The operation's values, error-free ones written to its socket here. The returned stream (read by
 * the plugins and graphql-ws) yields only the results with errors, and ends with the source; the
 * value after one of those is taken only once the stream is asked for more (graphql-ws has sent
 * it), so messages keep their order. The next value is taken once the socket took the last one:
 * a slow socket makes the source keep only its newest (events/queue.ts).
 */
export function pumpToSocket<T>(
  source: AsyncIterable<unknown>,
  map: (event: unknown) => ExecutionResult | Promise<ExecutionResult>,
  socket: SocketOperation,
  encodingOf: (result: ExecutionResult) => (() => string) | undefined,
): AsyncIterableIterator<T> {
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
        const mapped = map(step.value);
        // A shared result is usually ready: awaiting it anyway costs every socket a microtask.
        const result = mapped instanceof Promise ? await mapped : mapped;
        const json = encodingOf(result);
        if (!json) await offer({ value: result as T, done: false });
        else if (!(await socket.send(prefix + json() + '}'))) break;
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
