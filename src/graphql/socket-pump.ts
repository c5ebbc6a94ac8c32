// A WebSocket operation's error-free live values, written to its socket without passing each one
// through the plugins' result hooks and graphql-ws: their JSON, made once for every subscriber
// (shared-event-results.ts), wrapped in the operation's `next` message, byte for byte what
// graphql-ws would send. The hub's queue hands each value over inside its push (a sink, not a
// promise a value), so a fan-out is one loop of socket writes. A result with errors still takes
// the plugins' and graphql-ws's path, in its turn.
import type { ExecutionResult } from 'graphql';
import type { LatestByKeyQueue, ValueSink } from '../events/queue.ts';

/** Where a WebSocket operation's values go (graphql/ws.ts sets it on the operation's context). */
export interface SocketOperation {
  /** The operation's id, as the client chose it. */
  id: string;
  /** Writes one message: true once the socket took it, false once the socket is gone (a promise of either while the socket is behind). */
  send(message: string): boolean | Promise<boolean>;
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
  source: LatestByKeyQueue<unknown>,
  map: (event: unknown) => ExecutionResult | Promise<ExecutionResult>,
  socket: SocketOperation,
  encodingOf: (result: ExecutionResult) => (() => string) | undefined,
): AsyncIterableIterator<T> {
  const prefix = `{"id":${JSON.stringify(socket.id)},"type":"next","payload":`;
  let stopped = false;
  /** The stream's next() under way. */
  let taker: Taker<T> | null = null;
  /** A step for the stream that came before it asked. */
  let offered: { step?: IteratorResult<T>; error?: unknown; release: () => void } | null = null;
  /** Lets the source on once the stream asks again (or ends). */
  let inStream: (() => void) | null = null;

  const deliver = (t: Taker<T>, o: NonNullable<typeof offered>) => {
    if (o.step) {
      t.resolve(o.step);
      inStream = o.release;
      return;
    }
    // graphql-ws ends the operation on a rejected next() without calling return().
    t.reject(o.error);
    o.release();
    finish();
  };
  /** Resolves false once the stream has taken the step and asked again, or ended. */
  const offer = (step: IteratorResult<T> | undefined, error?: unknown) =>
    new Promise<boolean>((release) => {
      const t = taker;
      taker = null;
      const o = { step, error, release: () => release(!stopped && step !== undefined) };
      if (t) deliver(t, o);
      else offered = o;
    });
  const finish = () => {
    if (stopped) return;
    stopped = true;
    inStream?.();
    offered?.release();
    inStream = offered = null;
    taker?.resolve({ value: undefined, done: true });
    taker = null;
    source.close();
  };
  const write = (result: ExecutionResult): boolean | Promise<boolean> => {
    // A result read from the database may come after the operation ended.
    if (stopped) return false;
    const json = encodingOf(result);
    return json ? socket.send(prefix + json() + '}') : offer({ value: result as T, done: false });
  };
  const fail = (error: unknown) => offer(undefined, error);
  /** Values flow once the stream is first asked: graphql-ws and the plugins have then taken the operation on. */
  let draining = false;
  const sink: ValueSink<unknown> = {
    take(event) {
      if (stopped) return false;
      try {
        const mapped = map(event);
        return mapped instanceof Promise ? mapped.then(write, fail) : write(mapped);
      } catch (error) {
        return fail(error);
      }
    },
    closed: finish,
  };

  return {
    next() {
      inStream?.();
      inStream = null;
      if (!draining) {
        draining = true;
        source.drainTo(sink);
      }
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
