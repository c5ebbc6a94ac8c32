// A WebSocket operation's error-free live values are written to its socket by
// shared-event-results.ts, in the bytes graphql-ws would send; results with errors still go
// through the stream (the plugins, then graphql-ws), in order with the others; the stream ends
// with its source, and ending the stream stops the writes. A socket that is behind holds the
// newest value only.
import { describe, expect, it } from 'vitest';
import { GraphQLInt, GraphQLObjectType, GraphQLSchema, parse, type ExecutionResult } from 'graphql';
import { sharedEventResults } from '../../src/graphql/shared-event-results.ts';
import { pumpToSocket, type SocketOperation } from '../../src/graphql/socket-pump.ts';
import { LatestByKeyQueue } from '../../src/events/queue.ts';
import { waitFor } from '../helpers/wait.ts';

function setup() {
  const events = new LatestByKeyQueue<{ n: number }>(
    () => 'tick',
    () => {
      closed = true;
    },
  );
  let closed = false;
  const tick = new GraphQLObjectType({ name: 'Tick', fields: { n: { type: GraphQLInt } } });
  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({ name: 'Query', fields: { ok: { type: GraphQLInt } } }),
    subscription: new GraphQLObjectType({
      name: 'Subscription',
      fields: {
        tick: {
          type: tick,
          subscribe: () => events,
          resolve: (e: { n: number }) => {
            if (e.n < 0) throw new Error('negative');
            return e;
          },
        },
      },
    }),
  });
  const written: string[] = [];
  let refuse = false;
  /** Set: the socket is behind, and each write settles once this is called. */
  let behind: (() => void)[] | undefined;
  const socketOperation: SocketOperation = {
    id: 'op "1"',
    send: (message) => {
      if (refuse) return false;
      written.push(message);
      if (!behind) return true;
      const queue = behind;
      return new Promise((resolve) => queue.push(() => resolve(true)));
    },
  };
  const subscribe = sharedEventResults();
  const start = async () =>
    (await subscribe({
      schema,
      document: parse('subscription { tick { n } }'),
      contextValue: { socketOperation },
    })) as AsyncIterableIterator<ExecutionResult>;
  return {
    events,
    written,
    start,
    isClosed: () => closed,
    refuse: () => (refuse = true),
    fallBehind: () => (behind = []),
    catchUp: () => {
      const waiting = behind ?? [];
      behind = undefined;
      for (const settle of waiting) settle();
    },
  };
}

describe('live values on a WebSocket operation', () => {
  it('writes error-free values as graphql-ws would, and hands results with errors to the stream in order', async () => {
    const s = setup();
    const stream = await s.start();
    const yielded: ExecutionResult[] = [];
    const reading = (async () => {
      for await (const r of stream) {
        yielded.push(r);
      }
    })();
    s.events.push({ n: 1 });
    await waitFor(() => s.written.length === 1);
    expect(s.written[0]).toBe(JSON.stringify({ id: 'op "1"', type: 'next', payload: { data: { tick: { n: 1 } } } }));
    s.events.push({ n: -1 });
    await waitFor(() => yielded.length === 1);
    expect(yielded[0].errors?.[0].message).toBe('negative');
    s.events.push({ n: 2 });
    await waitFor(() => s.written.length === 2);
    expect(JSON.parse(s.written[1]).payload).toEqual({ data: { tick: { n: 2 } } });
    s.events.end();
    await reading;
    expect(yielded).toHaveLength(1);
  });

  it('takes no value past an error result until the stream asks again', async () => {
    const s = setup();
    const stream = await s.start();
    s.events.push({ n: -1 });
    const first = await stream.next();
    expect(first.value.errors).toHaveLength(1);
    s.events.push({ n: 3 });
    // The stream has not asked again: the value waits in the queue, unwritten.
    await new Promise((r) => setImmediate(r));
    expect(s.written).toHaveLength(0);
    expect(s.events.size).toBe(1);
    const rest = stream.next();
    await waitFor(() => s.written.length === 1);
    await stream.return!();
    expect(await rest).toEqual({ value: undefined, done: true });
    expect(s.isClosed()).toBe(true);
  });

  it('stops writing and closes the source once the stream is ended, or the socket is gone', async () => {
    const s = setup();
    const stream = await s.start();
    const pending = stream.next();
    s.events.push({ n: 1 });
    await waitFor(() => s.written.length === 1);
    await stream.return!();
    expect(await pending).toEqual({ value: undefined, done: true });
    expect(s.isClosed()).toBe(true);
    s.events.push({ n: 2 });
    expect(s.written).toHaveLength(1);

    const t = setup();
    const other = await t.start();
    const waiting = other.next();
    t.refuse();
    t.events.push({ n: 1 });
    expect(await waiting).toEqual({ value: undefined, done: true });
    expect(t.isClosed()).toBe(true);
  });

  it('writes nothing before the stream is first asked, then each value inside its push', async () => {
    const s = setup();
    const stream = await s.start();
    s.events.push({ n: 1 });
    await new Promise((r) => setImmediate(r));
    expect(s.written).toHaveLength(0);
    const rest = stream.next();
    expect(s.written).toHaveLength(1);
    s.events.push({ n: 2 });
    // No turn of the event loop between the push and the write: a fan-out is one loop.
    expect(s.written).toHaveLength(2);
    await stream.return!();
    expect(await rest).toEqual({ value: undefined, done: true });
  });

  it('keeps only the newest value while the socket is behind, and writes it once the socket caught up', async () => {
    const s = setup();
    const stream = await s.start();
    const rest = stream.next();
    s.fallBehind();
    s.events.push({ n: 1 });
    s.events.push({ n: 2 });
    s.events.push({ n: 3 });
    expect(s.written).toHaveLength(1);
    expect(s.events.size).toBe(1);
    s.catchUp();
    await waitFor(() => s.written.length === 2);
    expect(JSON.parse(s.written[1]).payload).toEqual({ data: { tick: { n: 3 } } });
    s.events.end();
    expect(await rest).toEqual({ value: undefined, done: true });
    expect(s.isClosed()).toBe(true);
  });

  it('completes only once the last value is written, when the source ends while the socket is behind', async () => {
    const s = setup();
    const stream = await s.start();
    let done = false;
    const rest = stream.next().then((step) => {
      done = true;
      return step;
    });
    s.fallBehind();
    s.events.push({ n: 1 });
    s.events.push({ n: 2 });
    s.events.end();
    await new Promise((r) => setImmediate(r));
    expect(done).toBe(false);
    s.catchUp();
    await waitFor(() => s.written.length === 2);
    expect(await rest).toEqual({ value: undefined, done: true });
    expect(JSON.parse(s.written[1]).payload).toEqual({ data: { tick: { n: 2 } } });
  });

  it('writes nothing for a result that comes after the stream ended', async () => {
    let closed = false;
    const events = new LatestByKeyQueue<unknown>(
      () => 'k',
      () => (closed = true),
    );
    const written: string[] = [];
    let settle: (r: ExecutionResult) => void = () => {};
    const stream = pumpToSocket<ExecutionResult>(
      events,
      () => new Promise<ExecutionResult>((r) => (settle = r)),
      { id: '1', send: (m) => written.push(m) > 0 },
      () => () => '{"data":{}}',
    );
    const rest = stream.next();
    events.push(1);
    await stream.return!();
    settle({ data: {} });
    await new Promise((r) => setImmediate(r));
    expect(written).toHaveLength(0);
    expect(closed).toBe(true);
    expect(await rest).toEqual({ value: undefined, done: true });
  });

  it('closes the source once a failure is handed to the stream, which graphql-ws ends without return()', async () => {
    let closed = false;
    const events = new LatestByKeyQueue<unknown>(
      () => 'k',
      () => (closed = true),
    );
    const stream = pumpToSocket<ExecutionResult>(
      events,
      () => {
        throw new Error('boom');
      },
      { id: '1', send: () => true },
      () => undefined,
    );
    events.push(1);
    await expect(stream.next()).rejects.toThrow('boom');
    expect(closed).toBe(true);
    expect(await stream.next()).toEqual({ value: undefined, done: true });
  });
});
