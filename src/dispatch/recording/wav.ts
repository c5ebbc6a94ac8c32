// Real, playable recordings for simulated calls: PCM 8 kHz mono 16-bit (telephone quality) with
// alternating beeps standing in for the two speakers. Capped so stored recordings stay small.

export const WAV_SAMPLE_RATE = 8000;
export const WAV_BITS_PER_SAMPLE = 16;
export const WAV_CHANNELS = 1;
export const WAV_HEADER_BYTES = 44;
export const WAV_CONTENT_TYPE = 'audio/wav';
export const MIN_RECORDING_MS = 500;
export const MAX_RECORDING_MS = 10_000;

/** Audio length for a call that talked for `answeredMs`: follows the call, within the caps. */
export function recordingLengthMs(answeredMs: number): number {
  if (!Number.isFinite(answeredMs)) return MIN_RECORDING_MS;
  return Math.min(MAX_RECORDING_MS, Math.max(MIN_RECORDING_MS, Math.round(answeredMs)));
}

/** Wraps 16-bit PCM samples in a canonical 44-byte RIFF/WAVE header (little-endian). */
export function encodeWav(samples: Int16Array, sampleRate = WAV_SAMPLE_RATE): Uint8Array {
  const blockAlign = (WAV_CHANNELS * WAV_BITS_PER_SAMPLE) / 8;
  const dataBytes = samples.length * blockAlign;
  const buf = new Uint8Array(WAV_HEADER_BYTES + dataBytes);
  const view = new DataView(buf.buffer);
  const ascii = (offset: number, s: string) => {
    for (let i = 0; i < s.length; i++) buf[offset + i] = s.charCodeAt(i);
  };
  ascii(0, 'RIFF');
  view.setUint32(4, 36 + dataBytes, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  view.setUint32(16, 16, true); // fmt chunk size for PCM
  view.setUint16(20, 1, true); // audio format 1 = PCM
  view.setUint16(22, WAV_CHANNELS, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * blockAlign, true);
  view.setUint16(32, blockAlign, true);
  view.setUint16(34, WAV_BITS_PER_SAMPLE, true);
  ascii(36, 'data');
  view.setUint32(40, dataBytes, true);
  for (let i = 0; i < samples.length; i++) view.setInt16(WAV_HEADER_BYTES + i * 2, samples[i], true);
  return buf;
}

const TONE_MS = 350;
const GAP_MS = 150;
const FADE_MS = 8; // avoids audible clicks at tone edges
const AGENT_HZ = [440, 494, 523];
const USER_HZ = [659, 698, 784];

/**
 * Generates `durationMs` (clamped by recordingLengthMs) of alternating agent/user beeps. `seed`
 * picks the pitches so different calls sound slightly different but the same call is identical.
 */
export function generateCallRecording(opts: { durationMs: number; seed?: number }): Uint8Array {
  const ms = recordingLengthMs(opts.durationMs);
  const seed = (opts.seed ?? 0) >>> 0;
  const total = Math.round((ms * WAV_SAMPLE_RATE) / 1000);
  // Sample i depends only on i and seed % 3 (both pitch banks have three tones), so every recording
  // is a prefix of one of three full-length tracks, synthesised once: a busy simulator then costs a
  // copy per call instead of a sine per sample.
  return encodeWav(track(seed % AGENT_HZ.length).subarray(0, total));
}

const tracks = new Map<number, Int16Array>();

function track(variant: number): Int16Array {
  let t = tracks.get(variant);
  if (!t) {
    t = synthesise(Math.round((MAX_RECORDING_MS * WAV_SAMPLE_RATE) / 1000), variant);
    tracks.set(variant, t);
  }
  return t;
}

function synthesise(total: number, seed: number): Int16Array {
  const samples = new Int16Array(total);
  const toneLen = (TONE_MS * WAV_SAMPLE_RATE) / 1000;
  const periodLen = ((TONE_MS + GAP_MS) * WAV_SAMPLE_RATE) / 1000;
  const fadeLen = (FADE_MS * WAV_SAMPLE_RATE) / 1000;
  const amplitude = 0.3 * 32767;

  for (let i = 0; i < total; i++) {
    const segment = Math.floor(i / periodLen);
    const pos = i - segment * periodLen;
    if (pos >= toneLen) continue; // silence between turns
    const bank = segment % 2 === 0 ? AGENT_HZ : USER_HZ;
    const hz = bank[(seed + segment) % bank.length];
    const envelope = Math.min(1, pos / fadeLen, (toneLen - pos) / fadeLen);
    samples[i] = Math.round(amplitude * envelope * Math.sin((2 * Math.PI * hz * i) / WAV_SAMPLE_RATE));
  }
  return samples;
}
