// Prometheus metrics of one process (API, worker or both), on a registry of its own. Counters are
// incremented where things happen; gauges of live objects (calls in flight, subscriptions) read
// the sources registered by whoever owns them; queue gauges are read from the database at scrape
// time. Every label has a bounded set of values (route patterns, statuses, outcomes).
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Database } from './db/client.ts';
import { runStatement } from './db/sql-statement.ts';

const PREFIX = 'callbatch_';
const HTTP_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']);

/** A live number to report (e.g. one worker's calls in flight); the gauge adds up every source's. */
export type GaugeSource = () => number;

export interface Metrics {
  readonly registry: Registry;
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  readonly callsPlaced: Counter;
  /** Ticks (a poll: a claim round, with recovery when due) this process's dispatch workers completed. */
  readonly workerTicks: Counter;
  readonly callsEnded: Counter<'status'>;
  readonly retriesScheduled: Counter;
  /** Dials per voice provider by result: placed, failed_over (refused for a provider-side reason, the next one tried), rejected (4xx for good), unavailable (failed without failing over), skipped (circuit open). */
  readonly providerDials: Counter<'provider' | 'result'>;
  /** Each provider's circuit breaker in this process: 0 closed, 1 half-open, 2 open. */
  readonly providerCircuitState: Gauge<'provider'>;
  readonly webhookDeliveries: Counter<'outcome'>;
  /** Rows the retention settings deleted, by table (history and recordings that went with their calls not counted). */
  readonly retentionDeleted: Counter<'table'>;
  /** Caller-ID numbers number health rested, by reason (`low_answer_rate`, `flagged`). */
  readonly didRested: Counter<'reason'>;
  /** Caller-ID numbers back from a rest. */
  readonly didRestored: Counter;
  /** Adds a source to `callbatch_calls_in_flight` / `callbatch_subscriptions`; returns its removal. */
  addInFlightSource(source: GaugeSource): () => void;
  addSubscriptionSource(source: GaugeSource): () => void;
  /** Adds a source to `callbatch_exports_in_progress`; returns its removal. */
  addExportSource(source: GaugeSource): () => void;
  /** Connections cut for sending too slowly: `headers` (HTTP_HEADERS_TIMEOUT_MS), `body` (below the body pace, or HTTP_REQUEST_TIMEOUT_MS). */
  readonly slowClients: Counter<'phase'>;
  /** Connections closed at accept: their address already held MAX_CONNECTIONS_PER_ADDRESS. */
  readonly connectionsRefused: Counter;
  /** Adds a source to `callbatch_request_body_bytes_held`; returns its removal. */
  addBodyBytesSource(source: GaugeSource): () => void;
  /** Live progress, per value sent to a batch's subscribers: `wait` (the hub has the value → its fan-out starts) and `fanout` (→ every socket written). */
  readonly liveProgressStage: Histogram<'stage'>;
}

function summed(sources: Set<GaugeSource>): number {
  let total = 0;
  for (const s of sources) total += s();
  return total;
}

function adder(sources: Set<GaugeSource>) {
  return (source: GaugeSource) => {
    sources.add(source);
    return () => void sources.delete(source);
  };
}

const STARTED = `status IN ('dispatching', 'running')`;
const WAITING_SQL = `SELECT COALESCE(sum(queued), 0)::int AS value FROM batches WHERE ${STARTED}`;
const OLDEST_WAITING_SQL = `SELECT COALESCE(EXTRACT(EPOCH FROM now() - min(started_at)), 0)::float8 AS value FROM batches WHERE ${STARTED} AND queued > 0`;
// Resting until the health job brings them back (it clears rested_until): no clock in the query.
const DIDS_RESTED_SQL = `SELECT count(*)::int AS value FROM did_numbers WHERE rested_until IS NOT NULL`;
const WEBHOOK_QUEUE_SQL = `SELECT count(*)::int AS value FROM webhook_deliveries WHERE status = 'pending'`;

export function createMetrics(db: Database): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: PREFIX });
  const inFlight = new Set<GaugeSource>();
  const subscriptions = new Set<GaugeSource>();
  const exports = new Set<GaugeSource>();
  const bodyBytes = new Set<GaugeSource>();

  const requests = new Counter({
    name: `${PREFIX}http_requests_total`,
    help: 'HTTP requests by method, route pattern and status',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const durations = new Histogram({
    name: `${PREFIX}http_request_duration_seconds`,
    help: 'HTTP request duration by method and route pattern',
    labelNames: ['method', 'route'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  new Gauge({
    name: `${PREFIX}calls_in_flight`,
    help: "Calls this process's workers are placing or talking on",
    registers: [registry],
    collect() {
      this.set(summed(inFlight));
    },
  });
  new Gauge({
    name: `${PREFIX}subscriptions`,
    help: 'GraphQL subscriptions this process serves',
    registers: [registry],
    collect() {
      this.set(summed(subscriptions));
    },
  });
  new Gauge({
    name: `${PREFIX}exports_in_progress`,
    help: 'CSV exports this process is streaming (each holds an export slot)',
    registers: [registry],
    collect() {
      this.set(summed(exports));
    },
  });
  new Gauge({
    name: `${PREFIX}request_body_bytes_held`,
    help: 'Request body bytes this process holds (of MAX_BODY_BYTES_IN_FLIGHT)',
    registers: [registry],
    collect() {
      this.set(summed(bodyBytes));
    },
  });
  const fromDatabase = (name: string, help: string, sql: string) =>
    new Gauge({
      name: PREFIX + name,
      help,
      registers: [registry],
      async collect() {
        const [row] = await runStatement<{ value: number }>(db, sql);
        this.set(Number(row?.value ?? 0));
      },
    });
  fromDatabase(
    'calls_waiting',
    'Calls of started batches waiting to be dialled, retries waiting for their time included (all processes)',
    WAITING_SQL,
  );
  fromDatabase(
    'oldest_waiting_batch_seconds',
    'Age of the oldest started batch that still has calls to dial (all processes); grows with slow dialling or low concurrency',
    OLDEST_WAITING_SQL,
  );
  fromDatabase('dids_rested', 'Caller-ID numbers resting (number health; all accounts), until the health job restores them', DIDS_RESTED_SQL);
  fromDatabase('webhook_queue_depth', 'Webhook deliveries waiting to be sent or retried (all processes)', WEBHOOK_QUEUE_SQL);

  return {
    registry,
    observeRequest(method, route, status, seconds) {
      const m = HTTP_METHODS.has(method) ? method : 'other';
      requests.inc({ method: m, route, status: String(status) });
      durations.observe({ method: m, route }, seconds);
    },
    callsPlaced: new Counter({ name: `${PREFIX}calls_placed_total`, help: 'Calls dialled by this process', registers: [registry] }),
    workerTicks: new Counter({
      name: `${PREFIX}worker_ticks_total`,
      help: "Ticks (polls: a claim round, recovery when due) this process's dispatch workers completed; stands still when the loop is stuck",
      registers: [registry],
    }),
    callsEnded: new Counter({
      name: `${PREFIX}calls_ended_total`,
      help: 'Calls that reached a final status in this process, by status',
      labelNames: ['status'],
      registers: [registry],
    }),
    retriesScheduled: new Counter({
      name: `${PREFIX}call_retries_scheduled_total`,
      help: 'Unanswered attempts put back in line by a retry policy',
      registers: [registry],
    }),
    providerDials: new Counter({
      name: `${PREFIX}provider_dials_total`,
      help: 'Dials per voice provider by result: placed, failed_over, rejected, unavailable, skipped (circuit open)',
      labelNames: ['provider', 'result'],
      registers: [registry],
    }),
    providerCircuitState: new Gauge({
      name: `${PREFIX}provider_circuit_state`,
      help: "Each voice provider's circuit breaker in this process: 0 closed, 1 half-open (one trial dial), 2 open (skipped)",
      labelNames: ['provider'],
      registers: [registry],
    }),
    webhookDeliveries: new Counter({
      name: `${PREFIX}webhook_deliveries_total`,
      help: 'Webhook delivery attempts by outcome (delivered, retry, failed, disabled, superseded)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    didRested: new Counter({
      name: `${PREFIX}did_rested_total`,
      help: 'Caller-ID numbers rested by number health, by reason (low_answer_rate, flagged)',
      labelNames: ['reason'],
      registers: [registry],
    }),
    didRestored: new Counter({ name: `${PREFIX}did_restored_total`, help: 'Caller-ID numbers back from a rest', registers: [registry] }),
    retentionDeleted: new Counter({
      name: `${PREFIX}retention_deleted_total`,
      help: 'Rows deleted by retention, by table (batches, calls, recordings, webhook_deliveries, provider_events)',
      labelNames: ['table'],
      registers: [registry],
    }),
    addInFlightSource: adder(inFlight),
    addSubscriptionSource: adder(subscriptions),
    addExportSource: adder(exports),
    slowClients: new Counter({
      name: `${PREFIX}http_slow_clients_total`,
      help: 'Connections cut for sending too slowly, by phase: headers (HTTP_HEADERS_TIMEOUT_MS), body (under the body pace or past HTTP_REQUEST_TIMEOUT_MS)',
      labelNames: ['phase'],
      registers: [registry],
    }),
    connectionsRefused: new Counter({
      name: `${PREFIX}http_connections_refused_total`,
      help: 'Connections closed at accept because their client address held MAX_CONNECTIONS_PER_ADDRESS already',
      registers: [registry],
    }),
    addBodyBytesSource: adder(bodyBytes),
    liveProgressStage: new Histogram({
      name: `${PREFIX}live_progress_stage_seconds`,
      help: 'Live progress per value sent to a batch: wait (from the notification that brought the value to its fan-out; coalescing) and fanout (until every subscriber socket is written)',
      labelNames: ['stage'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 1],
      registers: [registry],
    }),
  };
}
