// A GraphQL client in plain fetch: queries and mutations as one POST, subscriptions as
// server-sent events (the server's `Accept: text/event-stream` mode). The typed documents make
// every result and variable typed; nothing here knows the schema.
import type { TypedDocumentString } from './gql/graphql.ts';

export interface ClientOptions {
  /** e.g. http://127.0.0.1:3000/graphql */
  url: string;
  /** The account's API key (`sk_…`). */
  apiKey: string;
}

interface GraphQLResult<T> {
  data?: T | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

export class GraphQLRequestError extends Error {}

function request<V>(opts: ClientOptions, document: TypedDocumentString<unknown, V>, variables: V, accept: string, signal?: AbortSignal) {
  return fetch(opts.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept, authorization: `Bearer ${opts.apiKey}` },
    body: JSON.stringify({ query: document.toString(), variables }),
    signal,
  });
}

function dataOf<T>(result: GraphQLResult<T>): T {
  if (result.errors?.length || !result.data) {
    const first = result.errors?.[0];
    throw new GraphQLRequestError(first ? `${first.extensions?.code ?? 'ERROR'}: ${first.message}` : 'no data');
  }
  return result.data;
}

/** Runs a query or mutation; throws GraphQLRequestError on any GraphQL error. */
export async function execute<R, V>(opts: ClientOptions, document: TypedDocumentString<R, V>, variables: V): Promise<R> {
  const res = await request(opts, document, variables, 'application/graphql-response+json, application/json');
  return dataOf((await res.json()) as GraphQLResult<R>);
}

/** Each value of a subscription, until the server completes it or the caller stops iterating. */
export async function* subscribe<R, V>(opts: ClientOptions, document: TypedDocumentString<R, V>, variables: V): AsyncGenerator<R> {
  const abort = new AbortController();
  const res = await request(opts, document, variables, 'text/event-stream', abort.signal);
  if (!res.headers.get('content-type')?.includes('text/event-stream')) {
    dataOf((await res.json()) as GraphQLResult<R>); // refused before streaming: throws its error
    return;
  }
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  try {
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value.replace(/\r\n/g, '\n');
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const event = parseEvent(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (event.name === 'complete') return;
        if (event.name === 'next' && event.data) yield dataOf(JSON.parse(event.data) as GraphQLResult<R>);
      }
    }
  } finally {
    abort.abort();
  }
}

function parseEvent(block: string): { name: string; data: string } {
  let name = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('event:')) name = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
  }
  return { name, data: data.join('\n') };
}
