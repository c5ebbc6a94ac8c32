// A running batch's pace from its live counters: calls ended per minute over the last minute, and
// how long the rest will take at that pace. Kept in the view that receives the counters.

/** How far back the pace looks; a minute follows changes without jumping at every call. */
export const PACE_WINDOW_MS = 60_000;
/** A pace over less time than this is noise, not a pace. */
const MIN_SPAN_MS = 5_000;
const MAX_SAMPLES = 240;
const SAMPLE_EVERY_MS = 1_000;

export interface Pace {
  /** One reading of the counters: calls ended so far, at this time (ms). */
  sample(ended: number, at: number): void;
  /** Calls ended per minute over the window, or null until there is a pace. */
  perMinute(): number | null;
  /** "12.5 calls/min · about 4 min left", or an empty string. */
  describe(remaining: number): string;
}

function minutesLeft(remaining: number, perMinute: number): string {
  const minutes = remaining / perMinute;
  if (minutes < 1) return 'under a minute left';
  if (minutes < 90) return `about ${Math.round(minutes)} min left`;
  return `about ${Math.round(minutes / 60)} h left`;
}

export function createPace(): Pace {
  const samples: { ended: number; at: number }[] = [];
  const pace: Pace = {
    sample(ended, at) {
      const last = samples.at(-1);
      // Fewer ended calls than before means a new count (a reconnect re-read): start again.
      if (last && ended < last.ended) samples.length = 0;
      // Live counters arrive up to 20 times a second: keep about one reading a second.
      if (last && samples.length > 1 && at - samples[samples.length - 2].at < SAMPLE_EVERY_MS) samples.pop();
      samples.push({ ended, at });
      while (samples.length > MAX_SAMPLES || (samples.length > 2 && at - samples[1].at >= PACE_WINDOW_MS)) samples.shift();
    },
    perMinute() {
      const first = samples[0];
      const last = samples.at(-1);
      if (!first || !last || last.at - first.at < MIN_SPAN_MS) return null;
      return ((last.ended - first.ended) * 60_000) / (last.at - first.at);
    },
    describe(remaining) {
      const rate = pace.perMinute();
      if (rate === null || remaining <= 0) return '';
      if (rate === 0) return 'no call ended in the last minute';
      const shown = rate >= 10 ? Math.round(rate).toString() : rate.toFixed(1);
      return `${shown} calls/min · ${minutesLeft(remaining, rate)}`;
    },
  };
  return pace;
}
