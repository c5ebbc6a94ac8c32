// The dashboard's GraphQL client: queries and mutations over fetch, subscriptions over graphql-ws
// (one socket for the page, reconnecting with backoff), all typed by the codegen documents.
import { print, type DocumentNode } from 'graphql';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { createClient, type Client } from 'graphql-ws';

export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly details: string[] = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** idle: no live view needs the socket, so it is closed on purpose (not a connection problem). */
export type LiveState = 'idle' | 'connecting' | 'live' | 'offline';

interface GraphQLErrorLike {
  message?: string;
  extensions?: { code?: string; details?: unknown };
}

/** Operation name → sha256 of its document, defined by the server when it bundles the page. */
declare const __DASHBOARD_DOCUMENT_IDS__: Record<string, string> | undefined;
const documentIds: Record<string, string> = typeof __DASHBOARD_DOCUMENT_IDS__ === 'undefined' ? {} : __DASHBOARD_DOCUMENT_IDS__;

/**
 * A trusted document goes by its hash (docs/api.md#trusted-documents); any other, or one the server
 * does not know (a tab left open across a deploy holds the old build's hashes), by its text.
 */
function requestBody(doc: DocumentNode, variables: Record<string, unknown>, byText: boolean): string {
  const op = doc.definitions.find((d) => d.kind === 'OperationDefinition');
  const hash = !byText && op && 'name' in op && op.name ? documentIds[op.name.value] : undefined;
  if (hash) return JSON.stringify({ variables, extensions: { persistedQuery: { version: 1, sha256Hash: hash } } });
  return JSON.stringify({ query: source(doc), variables });
}

const sources = new WeakMap<object, string>();
function source(doc: DocumentNode): string {
  let s = sources.get(doc);
  if (!s) sources.set(doc, (s = print(doc)));
  return s;
}

function toApiError(errors: readonly GraphQLErrorLike[] | undefined, fallback: string): ApiError {
  const e = errors?.[0];
  const details = Array.isArray(e?.extensions?.details) ? (e!.extensions!.details as unknown[]).map(String) : [];
  return new ApiError(e?.message ?? fallback, e?.extensions?.code ?? 'ERROR', details);
}

const FATAL_CLOSE: Record<number, [string, string]> = {
  4401: ['UNAUTHENTICATED', 'Invalid API key'],
  4403: ['FORBIDDEN', 'API access is not enabled for this account'],
  4429: ['RATE_LIMITED', 'Too many failed attempts; wait a minute'],
};

export interface SubscriptionHandlers<R> {
  next(data: R): void;
  error(e: ApiError): void;
}

export class Api {
  private ws: Client | undefined;
  private readonly stateListeners = new Set<(s: LiveState) => void>();
  private readonly reconnectListeners = new Set<() => void>();
  state: LiveState = 'idle';

  constructor(
    private readonly key: string,
    /** Called once the server says the key is not (or no longer) good. */
    private readonly onAuthFailure: (e: ApiError) => void,
  ) {}

  request<R, V extends Record<string, unknown>>(doc: TypedDocumentNode<R, V>, variables: V): Promise<R> {
    return this.send(doc, variables, false);
  }

  private async send<R, V extends Record<string, unknown>>(doc: TypedDocumentNode<R, V>, variables: V, byText: boolean): Promise<R> {
    let res: Response;
    try {
      res = await fetch('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${this.key}` },
        body: requestBody(doc, variables, byText),
      });
    } catch {
      throw new ApiError('Cannot reach the server. Check your connection and try again.', 'NETWORK');
    }
    let body: { data?: R | null; errors?: GraphQLErrorLike[] };
    try {
      body = await res.json();
    } catch {
      throw new ApiError(`The server answered ${res.status} ${res.statusText}`.trim(), `HTTP_${res.status}`);
    }
    if (body.errors?.length) {
      const err = toApiError(body.errors, 'Request failed');
      if (err.code === 'PERSISTED_QUERY_NOT_FOUND' && !byText) return this.send(doc, variables, true);
      if (err.code === 'UNAUTHENTICATED' || err.code === 'FORBIDDEN') this.onAuthFailure(err);
      throw err;
    }
    if (!body.data) throw new ApiError(`The server answered ${res.status} without data`, `HTTP_${res.status}`);
    return body.data;
  }

  /**
   * A file from the REST API, read whole: the key travels in the Authorization header, never in a
   * URL (a plain link could not carry it). Refusals come back as ApiErrors in the contract's forms.
   */
  async file(path: string): Promise<Blob> {
    let res: Response;
    try {
      res = await fetch(path, { headers: { authorization: `Bearer ${this.key}` } });
    } catch {
      throw new ApiError('Cannot reach the server. Check your connection and try again.', 'NETWORK');
    }
    if (res.ok) {
      try {
        return await res.blob();
      } catch {
        throw new ApiError('The download broke off before the end; try again in a minute.', 'TRUNCATED');
      }
    }
    const body = (await res.json().catch(() => null)) as { detail?: string; message?: string; error?: { code?: string; details?: string[] } } | null;
    const err = new ApiError(
      body?.detail ?? body?.error?.details?.[0] ?? body?.message ?? `The server answered ${res.status}`,
      body?.error?.code ?? `HTTP_${res.status}`,
    );
    if (res.status === 401 || res.status === 403) this.onAuthFailure(err);
    throw err;
  }

  subscribe<R, V extends Record<string, unknown>>(doc: TypedDocumentNode<R, V>, variables: V, handlers: SubscriptionHandlers<R>): () => void {
    return this.socket().subscribe<R>(
      { query: source(doc), variables },
      {
        next: (result) => {
          if (result.errors?.length) handlers.error(toApiError(result.errors as GraphQLErrorLike[], 'Subscription failed'));
          else if (result.data) handlers.next(result.data as R);
        },
        error: (e) => {
          if (Array.isArray(e)) handlers.error(toApiError(e as GraphQLErrorLike[], 'Subscription refused'));
          else if (e && typeof e === 'object' && 'code' in e && FATAL_CLOSE[(e as CloseEvent).code]) {
            const [code, message] = FATAL_CLOSE[(e as CloseEvent).code];
            const err = new ApiError(message, code);
            if (code !== 'RATE_LIMITED') this.onAuthFailure(err);
            handlers.error(err);
          } else handlers.error(new ApiError('Live updates stopped', 'NETWORK'));
        },
        complete: () => {},
      },
    );
  }

  onState(listener: (s: LiveState) => void): () => void {
    this.stateListeners.add(listener);
    listener(this.state);
    return () => this.stateListeners.delete(listener);
  }

  /** After the socket came back: updates sent meanwhile are lost, so views re-read what they show. */
  onReconnect(listener: () => void): () => void {
    this.reconnectListeners.add(listener);
    return () => this.reconnectListeners.delete(listener);
  }

  dispose(): void {
    void this.ws?.dispose();
    this.ws = undefined;
    this.stateListeners.clear();
    this.reconnectListeners.clear();
  }

  private setState(s: LiveState) {
    this.state = s;
    for (const l of this.stateListeners) l(s);
  }

  private socket(): Client {
    if (this.ws) return this.ws;
    const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql`;
    this.ws = createClient({
      url,
      connectionParams: { authorization: `Bearer ${this.key}` },
      lazy: true,
      // Moving between pages unsubscribes and resubscribes: keep the socket through that.
      lazyCloseTimeout: 5_000,
      keepAlive: 20_000,
      retryAttempts: Number.POSITIVE_INFINITY,
      shouldRetry: (e) => !(e && typeof e === 'object' && 'code' in e && FATAL_CLOSE[(e as CloseEvent).code]),
      retryWait: async (retries) => {
        await new Promise((r) => setTimeout(r, Math.min(10_000, 500 * 2 ** retries) * (0.5 + Math.random() / 2)));
      },
      on: {
        connecting: () => this.setState('connecting'),
        connected: (_socket, _payload, wasRetry) => {
          this.setState('live');
          if (wasRetry) for (const l of this.reconnectListeners) l();
        },
        // 1000: the client closed it, having nothing left to listen to.
        closed: (event) => this.setState((event as CloseEvent | undefined)?.code === 1000 ? 'idle' : 'offline'),
      },
    });
    return this.ws;
  }
}
