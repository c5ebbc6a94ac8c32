import crypto from 'node:crypto';
import { loadConfig, type Config } from '../config.ts';
import { ACT_AS_HEADER } from '../graphql/context.ts';
import { OPERATOR_TOKEN_FILE, readOperatorToken } from '../operator-token.ts';

export interface GraphQLTransport {
  /** Runs a document with the admin token, optionally acting as one account. */
  request<T>(query: string, variables?: Record<string, unknown>, actAs?: string): Promise<T>;
  describe: string;
  close(): Promise<void>;
}

async function serverAnswers(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(800) });
    return res.ok;
  } catch {
    return false;
  }
}

function makeRequest(
  send: (req: Request) => Promise<Response>,
  baseUrl: string,
  token: string,
): GraphQLTransport['request'] {
  return async (query, variables = {}, actAs) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
    if (actAs) headers[ACT_AS_HEADER] = actAs;
    const res = await send(new Request(`${baseUrl}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query, variables }) }));
    const body = (await res.json()) as { data?: unknown; errors?: { message: string; extensions?: { details?: string[] } }[] };
    if (body.errors?.length) {
      const msgs = body.errors.map((e) => [e.message, ...(e.extensions?.details ?? [])].join('\n  '));
      throw new Error(msgs.join('\n'));
    }
    return body.data as never;
  };
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
    // The embedded start leaves its token in the data dir; a server with ADMIN_TOKEN needs the same value here.
    const token = config.ADMIN_TOKEN ?? readOperatorToken(config.DATA_DIR);
    if (!token) {
      throw new Error(
        `A server is running at ${url}: set ADMIN_TOKEN (the same value the server has), or DATA_DIR to the server's data dir (it holds ${OPERATOR_TOKEN_FILE}), to use the CLI.`,
      );
    }
    return { request: makeRequest((r) => fetch(r), url, token), describe: `server ${url}`, close: async () => {} };
  }
  const { createDeps } = await import('../bootstrap.ts');
  const { buildApp } = await import('../app.ts');
  // In-process: a one-off admin token that never leaves this process.
  const token = crypto.randomBytes(24).toString('base64url');
  const deps = await createDeps({ ...config, ADMIN_TOKEN: token, LOG_LEVEL: 'warn' });
  const app = buildApp(deps);
  return {
    request: makeRequest((r) => app.fetch(r), 'http://cli.local', token),
    describe: deps.db.kind === 'pglite' ? `data dir ${config.DATA_DIR}` : 'DATABASE_URL',
    close: () => deps.db.close(),
  };
}
