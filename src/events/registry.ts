// One event hub per process and database, created by the first subscription (a process that
// never serves one, such as a worker, never opens a LISTEN session) and closed with the app.
import type { AppDeps } from '../deps.ts';
import type { Database } from '../db/client.ts';
import { EventHub, type EventHubOptions } from './hub.ts';

const hubs = new WeakMap<Database, EventHub>();
const options = new WeakMap<Database, EventHubOptions>();

/** Tuning for the hub of this database (tests, benchmarks); takes effect when the hub is created. */
export function configureEvents(db: Database, opts: EventHubOptions): void {
  options.set(db, opts);
}

export function eventsFor(deps: Pick<AppDeps, 'db' | 'logger'>): EventHub {
  let hub = hubs.get(deps.db);
  if (!hub) {
    const created = new EventHub(deps.db, deps.logger, options.get(deps.db));
    hubs.set(deps.db, created);
    // A LISTEN that could not start (database down) is not cached: the next subscription retries.
    created.ready.catch((err) => {
      deps.logger.error({ err }, 'live progress: LISTEN failed');
      if (hubs.get(deps.db) === created) hubs.delete(deps.db);
      void created.close();
    });
    hub = created;
  }
  return hub;
}

/** The hub of this database if one was started (for stats), without starting one. */
export function existingEvents(db: Database): EventHub | undefined {
  return hubs.get(db);
}

export async function closeEvents(deps: Pick<AppDeps, 'db'>): Promise<void> {
  const hub = hubs.get(deps.db);
  if (!hub) return;
  hubs.delete(deps.db);
  await hub.close();
}
