import type { AppDeps } from './deps.ts';
import { createWorker } from './dispatch/worker.ts';
import { startWebhookDeliveryWorker } from './services/webhooks/delivery-worker.ts';

export interface Background {
  stop(): Promise<void>;
}

/** Starts the process's background loops (dispatch worker, …); each issue adds its own. */
export async function startBackground(deps: AppDeps): Promise<Background> {
  const loops: Background[] = [];
  const dispatch = createWorker(deps);
  dispatch.start();
  loops.push(dispatch);
  loops.push(startWebhookDeliveryWorker(deps));
  return {
    async stop() {
      await Promise.all(loops.map((l) => l.stop()));
    },
  };
}
