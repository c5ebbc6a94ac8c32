// The objects an API process builds once and every request shares: rate limiters, recently
// authenticated keys, the live event hub, the voice providers and their recording sources, the
// outcome counts and the slots of the reads that walk a whole batch. Built by app.ts and handed
// down explicitly.
import type { AppDeps } from '../deps.ts';
import type { VoiceProviderModule } from '../dispatch/voice/provider-module.ts';
import { createRecordingSources, type RecordingSources } from '../dispatch/voice/recording-sources.ts';
import { createLiveEvents, type LiveEvents } from '../events/live-events.ts';
import { createRateLimiters, type RateLimiters } from '../services/auth/rate-limit.ts';
import { createKeyCache, type KeyCache } from '../services/auth/key-cache.ts';
import { createOutcomeBreakdowns, type OutcomeBreakdowns } from '../services/batches/outcome-breakdown.ts';
import { createScanSlots, type ScanSlots } from '../services/batches/scan-slots.ts';

export interface AppServices {
  rateLimiters: RateLimiters;
  /** API keys that authenticated in the last API_KEY_CACHE_MS (services/auth/key-cache.ts). */
  keys: KeyCache;
  events: LiveEvents;
  /** The voice providers this app serves (their routes, account settings and recordings). */
  voiceProviders: readonly VoiceProviderModule[];
  /** Where provider-held recordings are fetched from (dispatch/voice/recording-sources.ts). */
  recordings: RecordingSources;
  outcomes: OutcomeBreakdowns;
  /** CSV exports streaming now, per account and in all (services/batches/scan-slots.ts). */
  exports: ScanSlots;
  /** Result pages filtered by outcome being read now, per account and in all (services/batches/scan-slots.ts). */
  outcomeReads: ScanSlots;
}

export function createAppServices(deps: AppDeps, voiceProviders: readonly VoiceProviderModule[]): AppServices {
  return {
    voiceProviders,
    rateLimiters: createRateLimiters(deps),
    keys: createKeyCache({ ttlMs: deps.config.API_KEY_CACHE_MS, clock: deps.clock }),
    events: createLiveEvents(deps),
    recordings: createRecordingSources(voiceProviders, deps),
    outcomes: createOutcomeBreakdowns(deps),
    // An export of a large batch streams for tens of seconds; an outcome-filtered page takes well under one.
    exports: createScanSlots({
      perProcess: deps.config.EXPORTS_PER_PROCESS,
      perAccount: deps.config.EXPORTS_PER_ACCOUNT,
      what: 'exports',
      retryAfterSeconds: 10,
    }),
    outcomeReads: createScanSlots({
      perProcess: deps.config.OUTCOME_READS_PER_PROCESS,
      perAccount: deps.config.OUTCOME_READS_PER_ACCOUNT,
      what: 'outcome-filtered reads',
      retryAfterSeconds: 2,
    }),
  };
}

/** The dependencies of an API process: the process-wide ones and its shared objects. */
export type ApiDeps = AppDeps & AppServices;
