// What a voice provider brings to this service besides the VoiceProvider the worker dials with:
// its account settings, the HTTP routes it pushes to (webhooks), how to refresh a recording it
// holds and the loops it runs. A provider is one folder under dispatch/voice/ exporting one
// VoiceProviderModule, listed once in registry.ts; app.ts, http/ and background.ts only walk the
// list, so they know no provider by name (docs/providers.md "Adding a provider").

import type { AppDeps } from '../../deps.ts';
import type { Scheduler } from '../../scheduler.ts';
import type { VoiceProvider } from './provider.ts';

/**
 * What a provider's parts may use: the process's dependencies (never the request's). Time is read
 * from `clock`; waits and timers run on `scheduler`, the worker's (WorkerOptions.scheduler) for the
 * providers it creates, so a test on manual time moves them too; absent, the real one.
 */
export type ProviderDeps = Pick<AppDeps, 'config' | 'clock' | 'logger' | 'db' | 'appSecret'> & { scheduler?: Scheduler };

/** An operator's `provider set` input, before the provider validates it. */
export interface ProviderAccountInput {
  apiKey: string | null;
  /** Calls per second per from-number; null: the provider's default. */
  dialRatePerNumber: number | null;
  /** Provider-specific settings (already checked to be a small flat object: account-config.ts). */
  settings: Record<string, string | number | boolean> | null;
}

/** One delivery to a provider route, read by http/provider-routes.ts under the limits the route declares. */
export interface ProviderDelivery {
  /** The body as received (UTF-8), e.g. for a signature over the exact bytes. */
  raw: string;
  /** The body parsed as JSON (its size and nesting bounded before parsing). */
  body: unknown;
  header(name: string): string | null;
}

/** The route's answer: `detail` becomes a `{"detail": …}` body, none an empty one. */
export interface ProviderReply {
  status: number;
  detail?: string;
}

/**
 * A POST endpoint served by every API process at /providers/<provider name>/<path>. Anyone can
 * reach it: the body counts on the sender address's anonymous share and is capped while it streams.
 */
export interface ProviderRoute {
  /** Below /providers/<name>/, e.g. 'webhook'. */
  path: string;
  /** Longest body taken (413 past it). */
  maxBodyBytes: number;
  /** A header every delivery must carry (its signature): without it 401 before the body is read. */
  signatureHeader?: string;
  receive(delivery: ProviderDelivery): Promise<ProviderReply>;
}

/** Where a provider-held recording can be fetched now (one per API process). */
export interface RecordingSource {
  /**
   * The call's recording address as it should be fetched now (a fresh one when the stored link
   * may have expired); null when this provider holds no recording for the call.
   */
  currentSource(callId: string): Promise<string | null>;
}

/** A loop a provider runs in every process that runs the background work (main with RUN_WORKER, worker). */
export interface ProviderJob {
  stop(): Promise<void>;
}

export interface VoiceProviderModule {
  /** accounts.provider names it; also its route prefix (/providers/<name>/) and provider_events.provider. */
  readonly name: string;
  /** The instance a worker dials with, created on the first call of an account using it. */
  create(deps: ProviderDeps): VoiceProvider;
  /**
   * `provider set`'s input → the JSON sealed on the account (services/accounts/provider-config.ts);
   * throws a validation AppError. Absent: the provider takes no settings (the account keeps none).
   */
  accountConfig?(input: ProviderAccountInput): object;
  /** Endpoints the provider pushes to (http/provider-routes.ts serves them). */
  routes?(deps: ProviderDeps): ProviderRoute[];
  /** For recordings the provider holds (recordings.source_url): proxied by /recordings, never handed out. */
  recordings?: {
    /** An operator-configured provider address whose recordings may sit on a private address. */
    trustedOrigin(config: AppDeps['config']): string | null | undefined;
    /** Built once per API process. */
    source(deps: ProviderDeps): RecordingSource;
  };
  /** Loops started with the process's background work and stopped with it. */
  jobs?(deps: AppDeps): ProviderJob[];
}
