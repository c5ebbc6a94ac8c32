import crypto from 'node:crypto';
import { loadConfig, type Config } from '../config.ts';
import { ACT_AS_HEADER } from '../graphql/context.ts';
import { OPERATOR_TOKEN_FILE, operatorTokenPath, readOperatorToken } from '../operator-token.ts';
import { newChallenge, OPERATOR_PROOF_PATH, provesToken } from '../services/auth/operator-proof.ts';
import { DataDirInUseError } from '../db/pglite-data-dir.ts';

export interface GraphQLTransport {
  /** Runs a document with the admin token, optionally acting as one account. */
  request<T>(query: string, variables?: Record<string, unknown>, actAs?: string): Promise<T>;
  /** Runs a subscription over server-sent events: each event's data until the server completes it. */
  subscribe<T>(query: string, variables: Record<string, unknown>, actAs: string): AsyncIterable<T>;
  /** POSTs bytes to an operator route (registry imports) with the admin token; its JSON answer, or throws its `detail`. */
  post<T>(pathAndQuery: string, body?: Uint8Array): Promise<T>;
  describe: string;
  close(): Promise<void>;
}

type GraphQLBody = { data?: unknown; errors?: { message: string; extensions?: { details?: string[] } }[] };

function isLoopback(url: string): boolean {
  const host = new URL(url).hostname;
  return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

async function serverAnswers(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(800) });
    return res.ok;
  } catch {
    return false;
  }
}

function dataOf(body: GraphQLBody): unknown {
  if (body.errors?.length) {
    const msgs = body.errors.map((e) => [e.message, ...(e.extensions?.details ?? [])].join('\n  '));
    throw new Error(msgs.join('\n'));
  }
  return body.data;
}

type Send = (req: Request) => Promise<Response>;

function graphqlRequest(baseUrl: string, token: string, query: string, variables: Record<string, unknown>, actAs?: string, accept?: string): Request {
  const headers: Record<string, string> = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
  if (actAs) headers[ACT_AS_HEADER] = actAs;
  if (accept) headers.accept = accept;
  return new Request(`${baseUrl}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
}

function makeRequest(send: Send, baseUrl: string, token: string): GraphQLTransport['request'] {
  return async (query, variables = {}, actAs) => {
    const res = await send(graphqlRequest(baseUrl, token, query, variables, actAs));
    return dataOf((await res.json()) as GraphQLBody) as never;
  };
}

/** GraphQL over SSE as Yoga serves it: `event: next` frames with a result each, then `event: complete`. */
function makeSubscribe(send: Send, baseUrl: string, token: string): GraphQLTransport['subscribe'] {
  return async function* subscribe<T>(query: string, variables: Record<string, unknown>, actAs: string) {
    const res = await send(graphqlRequest(baseUrl, token, query, variables, actAs, 'text/event-stream'));
    if (!res.body || !res.headers.get('content-type')?.startsWith('text/event-stream')) {
      dataOf((await res.json()) as GraphQLBody);
      throw new Error(`The server answered ${res.status} without an event stream`);
    }
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffered = '';
    try {
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        // Normalised after joining, so a CRLF split across chunks stays one line end.
        buffered = (buffered + decoder.decode(read.value, { stream: true })).replace(/\r\n/g, '\n');
        let end: number;
        while ((end = buffered.indexOf('\n\n')) >= 0) {
          const frame = buffered.slice(0, end).split('\n');
          buffered = buffered.slice(end + 2);
          if (frame.includes('event: complete')) return;
          const data = frame
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).trim())
            .join('\n');
          if (data) yield dataOf(JSON.parse(data) as GraphQLBody) as T;
        }
      }
    } finally {
      // The consumer stopped early (or the stream ended): the server ends the subscription.
      await reader.cancel().catch(() => {});
    }
  };
}

function makePost(send: Send, baseUrl: string, token: string): GraphQLTransport['post'] {
  return async <T>(pathAndQuery: string, body?: Uint8Array) => {
    const res = await send(
      new Request(`${baseUrl}${pathAndQuery}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
        body: body as Uint8Array<ArrayBuffer> | undefined,
      }),
    );
    const answer = (await res.json().catch(() => ({}))) as { detail?: string };
    if (!res.ok) throw new Error(`The server answered ${res.status}: ${answer.detail ?? 'no detail'}`);
    return answer as T;
  };
}

function makeTransport(send: Send, baseUrl: string, token: string, describe: string, close: () => Promise<void>): GraphQLTransport {
  return {
    request: makeRequest(send, baseUrl, token),
    subscribe: makeSubscribe(send, baseUrl, token),
    post: makePost(send, baseUrl, token),
    describe,
    close,
  };
}

/** Answers in time or not at all: the CLI tells what it found rather than waiting. */
const PROOF_TIMEOUT_MS = 5_000;

/**
 * The token file's token, once the server at `url` has shown it wrote that file: the file names
 * the address its server listened on, and the server proves it holds the token without the CLI
 * sending it (services/auth/operator-proof.ts). Throws, naming the file and the URL, when not.
 */
async function tokenFileFor(url: string, dataDir: string): Promise<string | null> {
  const file = readOperatorToken(dataDir);
  if (!file) return null;
  const where = operatorTokenPath(dataDir);
  if (file.url !== null && new URL(file.url).origin !== new URL(url).origin) {
    throw new Error(
      `The operator token in ${where} belongs to the server at ${file.url}, not to ${url}; the CLI did not send it. ` +
        `If that server still runs, set CLI_SERVER_URL=${file.url}; otherwise the file is stale (a server that has stopped left it).`,
    );
  }
  const challenge = newChallenge();
  let proof: unknown = null;
  try {
    const res = await fetch(`${url}${OPERATOR_PROOF_PATH}?challenge=${challenge}`, {
      signal: AbortSignal.timeout(PROOF_TIMEOUT_MS),
      redirect: 'error',
    });
    if (res.ok) proof = ((await res.json()) as { proof?: unknown }).proof;
  } catch {
    // No proof: refused below.
  }
  if (!provesToken(file.token, challenge, proof)) {
    throw new Error(
      `The operator token file ${where} is stale: whatever answers at ${url} is not the server that wrote it (it could not prove it holds the token), so the CLI did not send the token. ` +
        `Stop the process listening there and start the server again, or set ADMIN_TOKEN and CLI_SERVER_URL for the server you mean.`,
    );
  }
  return file.token;
}

/** The data dir is another process's: name the URL tried and where its server listens, if it said. */
function dataDirInUse(e: Error, tried: string, dataDir: string): Error {
  const held = e.message.split('; ')[0];
  const written = readOperatorToken(dataDir)?.url ?? null;
  const next =
    written !== null && new URL(written).origin !== new URL(tried).origin
      ? `Its server wrote its address in ${operatorTokenPath(dataDir)}: run the CLI with CLI_SERVER_URL=${written}.`
      : "Run the CLI with CLI_SERVER_URL set to that server's address (http://HOST:PORT), or stop it first.";
  return new Error(`${held}, and no server answered at ${tried} (GET /healthz), so the CLI could not use it. ${next}`);
}

/**
 * The CLI speaks GraphQL either way: to the running server's admin API (PGlite allows one process,
 * so a running server owns the data dir), or, when none answers, to an in-process app on the same
 * database. Both paths run the same documents through the same resolvers and services.
 */
export async function connect(env = process.env): Promise<GraphQLTransport> {
  const config: Config = loadConfig(env);
  const url = (env.CLI_SERVER_URL ?? `http://${config.HOST}:${config.PORT}`).replace(/\/+$/, '');
  if (await serverAnswers(url)) {
    // The embedded start leaves its token in the data dir, for a server on this machine only; a
    // server with ADMIN_TOKEN needs the same value here.
    const token = config.ADMIN_TOKEN ?? (isLoopback(url) ? await tokenFileFor(url, config.DATA_DIR) : null);
    if (!token) {
      throw new Error(
        isLoopback(url)
          ? `A server answers at ${url}, but ${operatorTokenPath(config.DATA_DIR)} is not there, so the CLI has no token for it. ` +
              `Run the CLI with that server's DATA_DIR (an embedded start writes ${OPERATOR_TOKEN_FILE} there); only a server started with its own ADMIN_TOKEN needs that same ADMIN_TOKEN here.`
          : `A server answers at ${url}: set ADMIN_TOKEN to the value that server was started with (a token file is only read for a server on this machine).`,
      );
    }
    return makeTransport(
      (r) => fetch(r),
      url,
      token,
      `server ${url}`,
      async () => {},
    );
  }
  const { createDeps } = await import('../bootstrap.ts');
  const { buildApp } = await import('../app.ts');
  // In-process: a one-off admin token that never leaves this process.
  const token = crypto.randomBytes(24).toString('base64url');
  let deps: Awaited<ReturnType<typeof createDeps>>;
  try {
    deps = await createDeps({ ...config, ADMIN_TOKEN: token, LOG_LEVEL: 'warn' });
  } catch (e) {
    throw e instanceof DataDirInUseError ? dataDirInUse(e, url, config.DATA_DIR) : e;
  }
  const app = buildApp(deps);
  const describe = deps.db.kind === 'pglite' ? `data dir ${config.DATA_DIR}` : 'DATABASE_URL';
  return makeTransport(
    (r) => app.fetch(r),
    'http://cli.local',
    token,
    describe,
    () => deps.db.close(),
  );
}
