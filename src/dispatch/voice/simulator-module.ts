// The simulator, the default provider: calls in this process, no account settings, no routes.
import type { AppDeps } from '../../deps.ts';
import { realScheduler } from '../../scheduler.ts';
import type { VoiceProvider } from './provider.ts';
import type { ProviderDeps, VoiceProviderModule } from './provider-module.ts';
import { createSimulatorProvider } from './simulator.ts';

/**
 * The simulator follows the app clock for its timestamps (so call records agree with the rest of the
 * data, also under a test clock) while its timers (SIM_CALL_MS) run on the worker's scheduler: real
 * time unless the worker was given another.
 */
export function simulatorFromConfig(deps: Pick<AppDeps, 'config' | 'clock' | 'logger'> & Pick<ProviderDeps, 'scheduler'>): VoiceProvider {
  const scheduler = deps.scheduler ?? realScheduler;
  return createSimulatorProvider({
    callMs: deps.config.SIM_CALL_MS,
    clock: { now: () => deps.clock.now(), setTimeout: scheduler.setTimeout.bind(scheduler), clearTimeout: scheduler.clearTimeout.bind(scheduler) },
    onListenerError: (err) => deps.logger.error({ err }, 'voice provider listener failed'),
  });
}

export const simulatorModule: VoiceProviderModule = { name: 'simulator', create: simulatorFromConfig };
