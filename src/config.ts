import { z } from 'zod';
import { isComplianceProfile } from './domain/compliance/profiles.ts';
import { COMPLIANCE_PROFILES } from './domain/compliance/rules-v1.ts';

const bool = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((v) => v === 'true' || v === '1' || v === 'yes');

/**
 * Every numeric setting: decimal digits only (with `fraction`, one decimal point), within [min, max].
 * Set but empty is an error, not the default: `Number('')` is 0 and `Number('0x10')` is 16, so a
 * loose parse turned `BATCH_RETENTION_DAYS=` into "keep forever" without a word.
 */
function numberSetting(min: number, max = Number.MAX_SAFE_INTEGER, kind: 'whole' | 'fraction' = 'whole') {
  const what = kind === 'whole' ? 'a whole number in decimal digits, e.g. 30' : 'a number in decimal digits, e.g. 1.5';
  const number = kind === 'whole' ? z.number().int() : z.number();
  return z
    .string()
    .min(1, { message: `is set but empty: give ${what}, or unset it for the default`, abort: true })
    .regex(kind === 'whole' ? /^\d+$/ : /^\d+(\.\d+)?$/, `must be ${what} (no sign, spaces, exponent or 0x)`)
    .transform(Number)
    .pipe(number.min(min).max(max))
    .meta({ numberSetting: true });
}

/** Whether a schema entry was built by numberSetting (under .default() / .optional()). */
function isNumberSetting(schema: z.ZodType): boolean {
  let inner: z.ZodType = schema;
  while (inner instanceof z.ZodDefault || inner instanceof z.ZodOptional) inner = inner.unwrap() as z.ZodType;
  return inner.meta()?.numberSetting === true;
}

export const configSchema = z.object({
  PORT: numberSetting(0, 65535).default(3000),
  HOST: z.string().default('127.0.0.1'),
  /** Public base URL used in signed links (recordings) and printed examples. */
  PUBLIC_URL: z.url().optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  DB_POOL_SIZE: numberSetting(1, 200).default(10),
  /** How long a pooled PostgreSQL connection may take to open before the query fails (503 to a request). */
  DB_CONNECT_TIMEOUT_MS: numberSetting(100, 120_000).default(5_000),
  /** Apply pending migrations on start (PGlite always does). */
  MIGRATE_ON_START: bool.default(true),
  /** Bearer token for the operator (admin) GraphQL mutations; admin API is off when unset. */
  ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  /** Bearer token for GET /metrics (the admin token works too); /metrics is off when neither is set. */
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  /** Secret for signed recording URLs and for encrypting provider secrets; random per data dir when unset. */
  APP_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Send a Server-Timing header with each API answer's phases (src/phase-timer.ts); off: it tells clients the server's step times. */
  SERVER_TIMING: bool.default(false),
  /** Run the dispatch worker inside the API process. */
  RUN_WORKER: bool.default(true),
  /** Create a demo account on an empty database and print its key. */
  SEED_DEMO: bool.default(true),
  /** Simulated call length in ms (ringing + conversation). */
  SIM_CALL_MS: numberSetting(0, 600_000).default(3000),
  /** Lowest `retry.delay_seconds` a batch may ask for (documented minimum 60; lower it for development and tests only). */
  RETRY_MIN_DELAY_SECONDS: numberSetting(0, 60).default(60),
  /**
   * Compliance profiles for an account that has not chosen its own (docs/campaigns.md "Compliance
   * profiles"): comma-separated names, `none` for none. The protective default: US numbers are
   * called only 08:00-21:00 in the called party's time unless the account opts out.
   */
  DEFAULT_COMPLIANCE_PROFILES: z
    .string()
    .default('us_tcpa')
    .transform((v) => (v.trim() === 'none' ? [] : v.split(',').map((p) => p.trim())))
    .refine((list) => list.every(isComplianceProfile), {
      message: `must be comma-separated profile names (${COMPLIANCE_PROFILES.join(', ')}) or none`,
    }),
  WORKER_ID: z.string().optional(),
  /** A worker-only process (`npm run worker`) answers /healthz, /readyz and /metrics on this port; none when unset. */
  WORKER_PORT: numberSetting(0, 65535).optional(),
  WORKER_POLL_MS: numberSetting(5, 60_000).default(200),
  LEASE_MS: numberSetting(1000, 3_600_000).default(30_000),
  /**
   * Provider circuit breaker, per worker process (docs/providers.md "Routing and failover"): after
   * this many consecutive provider-side failures (5xx, 429, unreachable) a provider is skipped for
   * PROVIDER_BREAKER_COOLDOWN_MS, then one trial dial decides whether it is back.
   */
  PROVIDER_BREAKER_FAILURES: numberSetting(1, 1000).default(5),
  PROVIDER_BREAKER_COOLDOWN_MS: numberSetting(100, 3_600_000).default(30_000),
  /**
   * Browser origins allowed to call the API (the dashboard's): comma-separated exact origins
   * (`https://app.example.com`) or `*`. Unset: no cross-origin access.
   */
  CORS_ORIGIN: z
    .string()
    .regex(/^\s*(\*|https?:\/\/[^\s,/]+(\s*,\s*https?:\/\/[^\s,/]+)*)\s*$/, 'must be * or comma-separated origins like https://app.example.com')
    .optional(),
  /** Largest request body accepted (REST and GraphQL). 64 MiB holds ~100k contacts of ~600 bytes. */
  MAX_BODY_BYTES: numberSetting(1024, 1024 * 1024 * 1024).default(64 * 1024 * 1024),
  /**
   * Request bodies held at once by this process (counted from the first byte until the response is
   * ready); past it a body gets 503 and Retry-After. Never below MAX_BODY_BYTES: one full body always fits.
   */
  MAX_BODY_BYTES_IN_FLIGHT: numberSetting(1024, 16 * 1024 * 1024 * 1024).default(96 * 1024 * 1024),
  /**
   * Of those, what one account's bodies may hold (its key authenticates before its body is read);
   * past it 429. Unset: MAX_BODY_BYTES; never below it. Keep it under MAX_BODY_BYTES_IN_FLIGHT less the
   * anonymous share, so that one account cannot take the budget from the others.
   */
  MAX_BODY_BYTES_IN_FLIGHT_PER_ACCOUNT: numberSetting(1024, 16 * 1024 * 1024 * 1024).optional(),
  /** Bodies of senders with no key that authenticated (anonymous GraphQL, Retell webhooks), together; past it 503. */
  MAX_BODY_BYTES_IN_FLIGHT_ANONYMOUS: numberSetting(1024, 16 * 1024 * 1024 * 1024).default(12 * 1024 * 1024),
  /** Bodies of such senders from one client address (IPv6 per /64); past it 429. Fits one 5 MiB Retell webhook. */
  MAX_BODY_BYTES_IN_FLIGHT_PER_ADDRESS: numberSetting(1024, 16 * 1024 * 1024 * 1024).default(6 * 1024 * 1024),
  /**
   * A request body must keep arriving: every BODY_PACE_WINDOW_MS must bring BODY_MIN_BYTES_PER_SECOND
   * times the window (or the rest of a declared body), else the request gets 408 and its connection closes.
   */
  BODY_MIN_BYTES_PER_SECOND: numberSetting(1, 1024 * 1024 * 1024).default(16 * 1024),
  BODY_PACE_WINDOW_MS: numberSetting(50, 600_000).default(5_000),
  /** A connection's request headers must be in within this (Node answers 408 and closes). */
  HTTP_HEADERS_TIMEOUT_MS: numberSetting(100, 600_000).default(10_000),
  /** A whole request (headers and body) must be in within this; a 64 MiB body then needs ~0.6 MB/s. */
  HTTP_REQUEST_TIMEOUT_MS: numberSetting(100, 3_600_000).default(120_000),
  /**
   * Open connections per client address (IPv6 per /64), counted at accept; more are closed at once.
   * Not applied with TRUST_PROXY (every connection is the proxy's: it caps its own clients).
   */
  MAX_CONNECTIONS_PER_ADDRESS: numberSetting(1, 1_000_000).default(512),
  /** Behind one reverse proxy: take the client address from the last X-Forwarded-For entry. */
  TRUST_PROXY: bool.default(false),
  /** Serve the dashboard bundle's source map (paths relative to the project, sources included); off by default. */
  DASHBOARD_SOURCE_MAP: bool.default(false),
  /**
   * Where per-account request counters live: `database` (shared by every API process), `memory`
   * (this process only), `auto` = database on PostgreSQL, memory on embedded PGlite.
   */
  RATE_LIMIT_STORE: z.enum(['auto', 'memory', 'database']).default('auto'),
  /** Failed authentications (wrong, malformed or revoked key) per client address per minute before its wrong keys get 429s (in-process). */
  AUTH_FAILURES_PER_MINUTE: numberSetting(1, 100_000).default(30),
  /** Requests without a key (introspection, `__typename`, a 401) per client address per minute before 429s (in-process). */
  ANONYMOUS_REQUESTS_PER_MINUTE: numberSetting(1, 1_000_000).default(300),
  /** GraphQL query cost limits: estimated objects fetched, field nesting, fields selected, parser tokens. */
  GRAPHQL_MAX_COMPLEXITY: numberSetting(1).default(5000),
  GRAPHQL_MAX_DEPTH: numberSetting(1, 100).default(10),
  GRAPHQL_MAX_BREADTH: numberSetting(1).default(200),
  /** Estimated database round trips per operation (root fields, paged lists times their parents' sizes). */
  GRAPHQL_MAX_LOOKUPS: numberSetting(1, 100_000).default(25),
  GRAPHQL_MAX_TOKENS: numberSetting(100).default(5_000),
  /**
   * Largest GraphQL document text, comments included, refused before parsing. The dashboard's
   * and the REST facade's documents are under 5 KB each; a 32 KiB prompt written as a literal fits.
   */
  GRAPHQL_MAX_DOCUMENT_BYTES: numberSetting(1024, 64 * 1024 * 1024).default(1024 * 1024),
  /** Heap (estimated) Yoga's cache of parsed documents and parse errors may hold (src/graphql/parse-cache.ts). */
  GRAPHQL_PARSE_CACHE_BYTES: numberSetting(1024 * 1024, 1024 * 1024 * 1024).default(64 * 1024 * 1024),
  /** Largest WebSocket message (graphql-ws frame); a larger one closes the socket with 1009 before it is buffered. */
  WS_MAX_PAYLOAD_BYTES: numberSetting(1024, 64 * 1024 * 1024).default(1024 * 1024),
  /** Open WebSockets per client address (IPv6 per /64), counted at upgrade before any authentication; more get HTTP 429. */
  WS_MAX_CONNECTIONS_PER_ADDRESS: numberSetting(1, 100_000).default(100),
  /** A socket that has not sent connection_init by then is closed (4408). */
  WS_INIT_TIMEOUT_MS: numberSetting(100, 60_000).default(3_000),
  /** Operations running at once on one socket (subscriptions mostly); more are refused one by one. */
  WS_MAX_OPERATIONS_PER_SOCKET: numberSetting(1, 10_000).default(100),
  /**
   * How long an API key that authenticated is trusted without a lookup, per process: the bound on
   * how late another process sees a revoked key, a disabled account or changed limits. 0: look up every request.
   */
  API_KEY_CACHE_MS: numberSetting(0, 60_000).default(1_000),
  /** How often open subscriptions and sockets re-check their API key (revoked keys, disabled accounts end them). */
  CREDENTIAL_RECHECK_MS: numberSetting(100, 300_000).default(2_000),
  /** Subscriptions (SSE or WebSocket) and sockets one API key holds open in one process; more are refused (RATE_LIMITED). */
  MAX_SUBSCRIPTIONS_PER_KEY: numberSetting(1, 1_000_000).default(5_000),
  /** Subscriptions and sockets one account (all its keys) holds open in one process; more are refused (RATE_LIMITED, 4429). */
  MAX_SUBSCRIPTIONS_PER_ACCOUNT: numberSetting(1, 1_000_000).default(2_000),
  /** Subscriptions and sockets one API process holds open in all (every account); more are refused (RATE_LIMITED, 4429). */
  MAX_SUBSCRIPTIONS_PER_PROCESS: numberSetting(1, 10_000_000).default(10_000),
  /**
   * Live values one account's subscriptions receive per second in all, per process (a second's worth
   * may go at once): past it each waits its turn and a newer value of the same thing replaces it.
   */
  SUBSCRIPTION_EVENTS_PER_ACCOUNT_PER_SECOND: numberSetting(1, 1_000_000).default(1_000),
  /** CSV exports of batch results (GET …/results.csv) one process streams at once; more get 429. */
  EXPORTS_PER_PROCESS: numberSetting(1, 1_000).default(4),
  /** CSV exports one account streams at once in one process; more get 429. */
  EXPORTS_PER_ACCOUNT: numberSetting(1, 1_000).default(2),
  /** Result pages filtered by outcome (each walks its whole batch) one process reads at once; more get 429. */
  OUTCOME_READS_PER_PROCESS: numberSetting(1, 1_000).default(8),
  /** Result pages filtered by outcome one account reads at once in one process; more get 429. */
  OUTCOME_READS_PER_ACCOUNT: numberSetting(1, 1_000).default(2),
  /** Longest a CSV export may stream; past it the connection is cut (the file is visibly truncated). */
  EXPORT_MAX_SECONDS: numberSetting(1, 86_400).default(600),
  /** Longest a CSV export waits for its client to take the next page; past it the connection is cut and the slot freed. */
  EXPORT_IDLE_SECONDS: numberSetting(1, 3_600).default(60),
  /** Let callback_url target loopback/private/link-local addresses (local receivers in tests and demos). */
  WEBHOOK_ALLOW_PRIVATE: bool.default(false),
  /** Per-attempt deadline for a webhook POST (connect + response). */
  WEBHOOK_TIMEOUT_MS: numberSetting(100, 15_000).default(10_000),
  WEBHOOK_POLL_MS: numberSetting(5, 60_000).default(500),
  /** How long a delivery worker holds a leased delivery; a crashed worker's deliveries are retried after it. */
  WEBHOOK_LEASE_MS: numberSetting(1000, 3_600_000).default(60_000),
  WEBHOOK_CONCURRENCY: numberSetting(1, 256).default(8),
  /** Delays (seconds) before each retry; the attempt after the last delay is the final one. */
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .regex(/^\d+(\s*,\s*\d+)*$/, 'must be comma-separated seconds, e.g. 5,300,1800')
    .default('5,300,1800,7200,18000,36000')
    .transform((s) => s.split(',').map((v) => Number(v.trim()))),
  /** Finished webhook deliveries (delivered, failed, disabled) are deleted this many days after their last attempt; 0 keeps them forever. */
  WEBHOOK_RETENTION_DAYS: numberSetting(0, 3650).default(30),
  /**
   * Finished batches (completed, cancelled) are deleted with their calls, history, recordings and
   * webhook deliveries this many days after their last call ended; 0 keeps them forever.
   */
  BATCH_RETENTION_DAYS: numberSetting(0, 3650).default(0),
  /** Recordings are deleted this many days after they were stored (the call stays, without one); 0: kept as long as their call. */
  RECORDING_RETENTION_DAYS: numberSetting(0, 3650).default(0),
  /** The voice provider's stored webhooks (provider_events) are deleted this many days after they were processed or arrived; 0 keeps them forever. */
  PROVIDER_EVENT_RETENTION_DAYS: numberSetting(0, 3650).default(7),
  /** Number health (docs/campaigns.md "Number health"): days in each caller-ID number's rolling window, today included. */
  NUMBER_HEALTH_WINDOW_DAYS: numberSetting(1, 90).default(7),
  /** A number with fewer ended dials in its window is not judged (nor counted in the pool median). */
  NUMBER_HEALTH_MIN_DIALS: numberSetting(1, 100_000).default(30),
  /** A number whose answer rate is below this fraction of its pool's median answer rate is rested. */
  NUMBER_HEALTH_THRESHOLD: numberSetting(0, 1, 'fraction').default(0.5),
  /** How long a rest lasts (hours). */
  NUMBER_HEALTH_REST_HOURS: numberSetting(0, 24 * 30, 'fraction').default(24),
  /** An answered call that talked for less than this (seconds) is a short call. */
  NUMBER_HEALTH_SHORT_CALL_SECONDS: numberSetting(1, 3600).default(10),
  /** How often the worker's health job evaluates every pool (ms); 0: never (numbers are then never rested or restored). */
  NUMBER_HEALTH_EVERY_MS: numberSetting(0, 86_400_000).default(900_000),
  /** After a secret rotation, the previous secret also signs for this long. */
  WEBHOOK_SECRET_OVERLAP_HOURS: numberSetting(0, 24 * 30, 'fraction').default(24),
  /** Retell (voice provider 'retell') API address; tests point it at the local fake. Its origin is trusted for recording downloads. */
  RETELL_BASE_URL: z.url().optional(),
  /** Fallback Retell key for accounts that have none of their own (`provider set --api-key`). */
  RETELL_API_KEY: z.string().min(1).optional(),
  /** Dials per second per from-number, per worker process; 0 = unpaced. An account's own rate wins. */
  RETELL_DIAL_RATE_PER_NUMBER: numberSetting(0, 1000, 'fraction').default(1),
  /** A call with no final event by its max duration + this is settled from get-call. */
  RETELL_RECONCILE_GRACE_MS: numberSetting(0).default(120_000),
  /** A call with no call_analyzed this long after it ended is fetched with get-call. */
  RETELL_ANALYSIS_GRACE_MS: numberSetting(0).default(180_000),
  /** How often a worker reads stored provider events for its calls. */
  RETELL_POLL_MS: numberSetting(5, 60_000).default(500),
  /** Vapi (voice provider 'vapi') API address; tests point it at the local fake. */
  VAPI_BASE_URL: z.url().optional(),
  /** Dials per second per from-number, per worker process; 0 = unpaced. An account's own rate wins. */
  VAPI_DIAL_RATE_PER_NUMBER: numberSetting(0, 1000, 'fraction').default(1),
  /** A call with no end-of-call-report by its max duration + this is settled from GET /call/{id}. */
  VAPI_RECONCILE_GRACE_MS: numberSetting(0).default(120_000),
  /** An ended call without an end-of-call-report this long after it ended is fetched with GET /call/{id} for its analysis. */
  VAPI_ANALYSIS_GRACE_MS: numberSetting(0).default(180_000),
  /** How often a worker reads stored Vapi events for its calls. */
  VAPI_POLL_MS: numberSetting(5, 60_000).default(500),
});

export type Config = z.infer<typeof configSchema>;

/** The numeric settings' names: for them an empty value is an error rather than unset. */
export const NUMBER_SETTINGS: ReadonlySet<string> = new Set(
  Object.entries(configSchema.shape)
    .filter(([, schema]) => isNumberSetting(schema))
    .map(([name]) => name),
);

export class ConfigError extends Error {}

/** Parses the environment once at boot; a bad value names the variable and stops start-up. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // An empty value means unset, except for a number (numberSetting says why).
  const cleaned = Object.fromEntries(Object.entries(env).filter(([k, v]) => v !== undefined && (v !== '' || NUMBER_SETTINGS.has(k))));
  const parsed = configSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}
