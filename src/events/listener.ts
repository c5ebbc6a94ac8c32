// The one LISTEN session of an API process. On PostgreSQL: a dedicated connection (not from the
// pool: a pooled client would hand its LISTEN to whoever borrows it next), reconnected with backoff
// when it drops; notifications sent while it was away are lost, so every reconnect is followed by
// onResync (the hub re-reads everything it watches). On PGlite: pglite.listen in-process.
import pg from 'pg';
import type { Logger } from 'pino';
import type { Database } from '../db/client.ts';

export const CHANNELS = ['batch_changed', 'calls_changed'] as const;
export type Channel = (typeof CHANNELS)[number];

export interface ListenerHandlers {
  notify(channel: Channel, payload: string): void;
  resync(): void;
}

export interface Listener {
  /** Resolves once LISTEN is in effect; rejects if the first connection fails. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function createListener(db: Database, logger: Logger, handlers: ListenerHandlers): Listener {
  if (db.pglite) return pgliteListener(db, handlers);
  if (!db.url) throw new Error('events: PostgreSQL without a connection string cannot LISTEN');
  return postgresListener(db.url, db.connectTimeoutMs ?? 5_000, logger, handlers);
}

function pgliteListener(db: Database, handlers: ListenerHandlers): Listener {
  const lite = db.pglite!;
  let unsubscribers: (() => Promise<void>)[] = [];
  return {
    async start() {
      unsubscribers = await Promise.all(CHANNELS.map((c) => lite.listen(c, (payload) => handlers.notify(c, payload))));
    },
    async stop() {
      const list = unsubscribers;
      unsubscribers = [];
      if (lite.closed) return;
      await Promise.all(list.map((u) => u().catch(() => {})));
    },
  };
}

const HEALTH_CHECK_MS = 15_000;
const MAX_BACKOFF_MS = 5_000;

/**
 * `connectTimeoutMs`: the pool's (DB_CONNECT_TIMEOUT_MS). Without it pg waits forever for a server
 * that accepts the connection and never answers, and the reconnect loop with it: the process would
 * never resync. Its statements (LISTEN, the health check's SELECT 1) get HEALTH_CHECK_MS for the same
 * reason: a half-open connection answers nothing, and keep-alive takes the OS's hours to notice.
 */
function postgresListener(url: string, connectTimeoutMs: number, logger: Logger, handlers: ListenerHandlers): Listener {
  const log = logger.child({ component: 'events-listener' });
  let client: pg.Client | undefined;
  let stopped = false;
  let backoff = 100;
  let reconnectTimer: NodeJS.Timeout | undefined;
  let healthTimer: NodeJS.Timeout | undefined;

  async function connect(): Promise<void> {
    const c = new pg.Client({
      connectionString: url,
      keepAlive: true,
      application_name: 'call-batch-events',
      connectionTimeoutMillis: connectTimeoutMs,
      query_timeout: HEALTH_CHECK_MS,
    });
    c.on('notification', (m) => {
      if (m.payload && (CHANNELS as readonly string[]).includes(m.channel)) handlers.notify(m.channel as Channel, m.payload);
    });
    c.on('error', (err) => lost(c, err));
    c.on('end', () => lost(c));
    try {
      await c.connect();
      await c.query(CHANNELS.map((ch) => `LISTEN ${ch}`).join('; '));
    } catch (e) {
      c.end().catch(() => {});
      throw e;
    }
    if (stopped) {
      await c.end().catch(() => {});
      return;
    }
    client = c;
    backoff = 100;
  }

  function lost(c: pg.Client, err?: Error): void {
    if (c !== client || stopped) return;
    client = undefined;
    log.warn({ err }, 'LISTEN connection lost; reconnecting');
    c.end().catch(() => {});
    scheduleReconnect();
  }

  function scheduleReconnect(): void {
    if (stopped || reconnectTimer) return;
    reconnectTimer = setTimeout(async () => {
      reconnectTimer = undefined;
      try {
        await connect();
        log.info('LISTEN connection restored');
        handlers.resync();
      } catch (err) {
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
        log.warn({ err, retryInMs: backoff }, 'LISTEN reconnect failed');
        scheduleReconnect();
      }
    }, backoff);
  }

  // A connection can die without an error event (half-open TCP); a cheap query finds out.
  function healthCheck(): void {
    const c = client;
    if (!c) return;
    c.query('SELECT 1').catch((err) => lost(c, err));
  }

  return {
    async start() {
      await connect();
      healthTimer = setInterval(healthCheck, HEALTH_CHECK_MS);
      healthTimer.unref();
    },
    async stop() {
      stopped = true;
      if (reconnectTimer) clearTimeout(reconnectTimer);
      if (healthTimer) clearInterval(healthTimer);
      const c = client;
      client = undefined;
      await c?.end().catch(() => {});
    },
  };
}
