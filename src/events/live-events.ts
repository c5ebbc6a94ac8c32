// The process's event hub, created by the first subscription (a process that never serves one,
// such as a worker, never opens a LISTEN session) and closed with the app.
import type { AppDeps } from '../deps.ts';
import { EventHub } from './hub.ts';

export interface LiveEvents {
  /** The hub, started on first use. */
  hub(): EventHub;
  /** The hub if one was started (for stats), without starting one. */
  started(): EventHub | undefined;
  close(): Promise<void>;
}

export function createLiveEvents(deps: Pick<AppDeps, 'db' | 'logger' | 'config' | 'metrics'>): LiveEvents {
  const stage = deps.metrics.liveProgressStage;
  let current: EventHub | undefined;
  return {
    hub() {
      if (current) return current;
      const created = new EventHub(deps.db, deps.logger, {
        deliveriesPerSecond: deps.config.SUBSCRIPTION_EVENTS_PER_ACCOUNT_PER_SECOND,
        onFanOut: (waitMs, fanOutMs) => {
          stage.observe({ stage: 'wait' }, waitMs / 1000);
          stage.observe({ stage: 'fanout' }, fanOutMs / 1000);
        },
      });
      current = created;
      // A LISTEN that could not start (database down) is not kept: the next subscription retries.
      created.ready.catch((err) => {
        deps.logger.error({ err }, 'live progress: LISTEN failed');
        if (current === created) current = undefined;
        void created.close();
      });
      return created;
    },
    started: () => current,
    async close() {
      const hub = current;
      current = undefined;
      await hub?.close();
    },
  };
}
