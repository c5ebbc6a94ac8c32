import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Database } from './db/client.ts';
import type { Metrics } from './metrics.ts';

/** A clock the worker and services read, so tests can move time without sleeping. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** Everything a request or a worker needs; built once per process by app.ts. */
export interface AppDeps {
  config: Config;
  db: Database;
  logger: Logger;
  clock: Clock;
  /** Secret for signing recording URLs and encrypting provider secrets. */
  appSecret: string;
  /** This process's Prometheus registry and instruments (served at /metrics). */
  metrics: Metrics;
}
