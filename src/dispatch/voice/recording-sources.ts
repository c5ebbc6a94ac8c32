// Recordings providers hold (recordings.source_url) as every API process sees them: which provider
// addresses may be private, and a fresh link when the stored one stopped working. A call's row does
// not say which provider placed it (its account may have switched since), so each provider that
// holds recordings is asked in the registry's order; the first link found wins.
import type { AppDeps } from '../../deps.ts';
import type { ProviderDeps, RecordingSource, VoiceProviderModule } from './provider-module.ts';

export interface RecordingSources extends RecordingSource {
  /** Operator-configured provider origins, whose recordings may sit on a private address. */
  trustedOrigins: readonly string[];
}

export function createRecordingSources(modules: readonly VoiceProviderModule[], deps: ProviderDeps & Pick<AppDeps, 'config'>): RecordingSources {
  const holders = modules.flatMap((m) => (m.recordings ? [m.recordings] : []));
  const sources = holders.map((r) => r.source(deps));
  const trustedOrigins = holders.flatMap((r) => r.trustedOrigin(deps.config) ?? []);
  return {
    trustedOrigins,
    async currentSource(callId) {
      let failure: { err: unknown } | null = null;
      for (const s of sources) {
        try {
          const url = await s.currentSource(callId);
          if (url) return url;
        } catch (err) {
          // Another provider may hold it; the first failure is reported only if none does.
          failure ??= { err };
        }
      }
      if (failure) throw failure.err;
      return null;
    },
  };
}
