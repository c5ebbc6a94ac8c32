// Subscription clients for tests: graphql-ws (through test/helpers/ws-client.ts) and SSE (Yoga's
// distinct-connections mode, read from a fetch Response), both collecting results into a stream
// that a test can wait on.
import type { Client } from 'graphql-ws';

export interface Stream<T> {
  /** Every `next` result so far (data or errors). */
  results: { data?: T; errors?: any[] }[];
  /** Data of every result without errors. */
  values(): T[];
  /** Resolves with the first value matching, waiting up to timeoutMs. */
  until(pred: (v: T) => boolean, timeoutMs?: number): Promise<T>;
  /** Resolves with the first result carrying errors. */
  firstError(timeoutMs?: number): Promise<any[]>;
  /** Resolves when the server completes the operation (or closes). */
  done: Promise<void>;
  close(): void;
}

function streamCore<T>() {
  const results: { data?: T; errors?: any[] }[] = [];
  const listeners = new Set<() => void>();
  let finished = false;
  let failure: unknown;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  const changed = () => {
    for (const l of [...listeners]) l();
  };
  const waitFor = <R>(probe: () => R | undefined, timeoutMs: number, what: string): Promise<R> =>
    new Promise<R>((resolve, reject) => {
      const check = () => {
        const hit = probe();
        if (hit !== undefined) {
          cleanup();
          resolve(hit);
        } else if (finished) {
          cleanup();
          reject(
            new Error(
              `stream ended before ${what}: ${failure ? String((failure as any)?.message ?? JSON.stringify(failure)) : ''} ${JSON.stringify(results.slice(-3))}`,
            ),
          );
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out waiting for ${what}; last results: ${JSON.stringify(results.slice(-3))}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
      check();
    });
  return {
    push(r: { data?: T; errors?: any[] }) {
      results.push(r);
      changed();
    },
    finish(err?: unknown) {
      if (finished) return;
      finished = true;
      failure = err;
      resolveDone();
      changed();
    },
    api: {
      results,
      values: () => results.filter((r) => !r.errors && r.data).map((r) => r.data as T),
      until: (pred: (v: T) => boolean, timeoutMs = 15_000) =>
        waitFor(() => results.find((r) => !r.errors && r.data && pred(r.data))?.data, timeoutMs, 'a matching value'),
      firstError: (timeoutMs = 10_000) =>
        waitFor(() => results.find((r) => r.errors)?.errors ?? (failure ? [failure] : undefined), timeoutMs, 'an error'),
      done,
    },
  };
}

export function wsStream<T = any>(client: Client, query: string, variables?: Record<string, unknown>): Stream<T> {
  const core = streamCore<T>();
  const unsubscribe = client.subscribe<T>(
    { query, variables },
    {
      next: (v) => core.push(v as never),
      error: (e) => core.finish(e),
      complete: () => core.finish(),
    },
  );
  return { ...core.api, close: unsubscribe };
}

/** A subscription over SSE through a fetch-like function (app.fetch, or global fetch on a port). */
export function sseStream<T = any>(
  fetchFn: (req: Request) => Promise<Response>,
  baseUrl: string,
  query: string,
  variables: Record<string, unknown> | undefined,
  key: string | null,
): Stream<T> & { response: Promise<Response> } {
  const core = streamCore<T>();
  const abort = new AbortController();
  let reader: ReadableStreamDefaultReader<string> | undefined;
  const headers: Record<string, string> = { accept: 'text/event-stream', 'content-type': 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  const response = fetchFn(
    new Request(`${baseUrl}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query, variables }), signal: abort.signal }),
  );
  void (async () => {
    try {
      const res = await response;
      const type = res.headers.get('content-type') ?? '';
      if (!type.includes('text/event-stream')) {
        // Refused before streaming (e.g. HTTP 401): one JSON result.
        core.push(JSON.parse(await res.text()));
        core.finish();
        return;
      }
      reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let buf = '';
      for (;;) {
        const { value, done } = await reader!.read();
        if (done) break;
        buf += value;
        let at: number;
        while ((at = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, at);
          buf = buf.slice(at + 2);
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('event:')) event = line.slice(6).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
          }
          if (event === 'complete') {
            core.finish();
            return;
          }
          if (data.length) core.push(JSON.parse(data.join('\n')));
        }
      }
      core.finish();
    } catch (e) {
      core.finish((e as Error).name === 'AbortError' ? undefined : e);
    }
  })();
  return {
    ...core.api,
    response,
    // A client going away: the request is aborted and the response body cancelled.
    close: () => {
      abort.abort();
      void reader?.cancel().catch(() => undefined);
    },
  };
}

/** queued + inProgress + completed + failed + cancelled = acceptedContacts, for every value seen. */
export function sumRuleHolds(p: {
  queued: number;
  inProgress: number;
  completed: number;
  failed: number;
  cancelled: number;
  acceptedContacts: number;
}): boolean {
  return p.queued + p.inProgress + p.completed + p.failed + p.cancelled === p.acceptedContacts;
}
