import { describe, expect, it } from 'vitest';
import {
  MAX_RECORDING_MS,
  MIN_RECORDING_MS,
  WAV_HEADER_BYTES,
  encodeWav,
  generateCallRecording,
  recordingLengthMs,
} from '../../src/dispatch/recording/wav.ts';

const text = (b: Uint8Array, at: number, len = 4) => String.fromCharCode(...b.subarray(at, at + len));

function header(b: Uint8Array) {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  return {
    riff: text(b, 0),
    riffSize: v.getUint32(4, true),
    wave: text(b, 8),
    fmt: text(b, 12),
    fmtSize: v.getUint32(16, true),
    format: v.getUint16(20, true),
    channels: v.getUint16(22, true),
    sampleRate: v.getUint32(24, true),
    byteRate: v.getUint32(28, true),
    blockAlign: v.getUint16(32, true),
    bits: v.getUint16(34, true),
    data: text(b, 36),
    dataSize: v.getUint32(40, true),
  };
}

describe('encodeWav', () => {
  it('writes a canonical PCM header and little-endian samples', () => {
    const b = encodeWav(new Int16Array([0, 1, -1, 32767, -32768]));
    expect(header(b)).toEqual({
      riff: 'RIFF',
      riffSize: 36 + 10,
      wave: 'WAVE',
      fmt: 'fmt ',
      fmtSize: 16,
      format: 1,
      channels: 1,
      sampleRate: 8000,
      byteRate: 16000,
      blockAlign: 2,
      bits: 16,
      data: 'data',
      dataSize: 10,
    });
    expect(b.byteLength).toBe(54);
    expect([...b.subarray(44)]).toEqual([0, 0, 1, 0, 0xff, 0xff, 0xff, 0x7f, 0x00, 0x80]);
  });
});

describe('generateCallRecording', () => {
  it('lasts as long as the call, as 8 kHz mono 16-bit', () => {
    const b = generateCallRecording({ durationMs: 2_500, seed: 7 });
    const h = header(b);
    expect(h.sampleRate).toBe(8000);
    expect(h.dataSize).toBe(2.5 * 8000 * 2);
    expect(b.byteLength).toBe(WAV_HEADER_BYTES + h.dataSize);
    expect(h.riffSize).toBe(b.byteLength - 8);
  });

  it('caps long calls and pads very short ones', () => {
    expect(generateCallRecording({ durationMs: 3_600_000 }).byteLength).toBe(WAV_HEADER_BYTES + (MAX_RECORDING_MS / 1000) * 16000);
    expect(generateCallRecording({ durationMs: 0 }).byteLength).toBe(WAV_HEADER_BYTES + (MIN_RECORDING_MS / 1000) * 16000);
    expect(recordingLengthMs(Number.NaN)).toBe(MIN_RECORDING_MS);
    expect(recordingLengthMs(4_321)).toBe(4_321);
  });

  it('contains audible beeps separated by silence, within the sample range', () => {
    const b = generateCallRecording({ durationMs: 2_000, seed: 1 });
    const s = new Int16Array(b.slice(WAV_HEADER_BYTES).buffer);
    const peak = s.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
    expect(peak).toBeGreaterThan(5_000);
    expect(peak).toBeLessThan(32_767);
    // 350 ms tone + 150 ms gap: the middle of the first gap (400 ms) is silent, mid-tone is not
    expect(s.subarray(0.38 * 8000, 0.42 * 8000).every((x) => x === 0)).toBe(true);
    expect(s.subarray(0.1 * 8000, 0.2 * 8000).some((x) => Math.abs(x) > 5_000)).toBe(true);
  });

  it('is deterministic per seed and differs across seeds', () => {
    const a = generateCallRecording({ durationMs: 1_500, seed: 3 });
    expect(generateCallRecording({ durationMs: 1_500, seed: 3 })).toEqual(a);
    expect(generateCallRecording({ durationMs: 1_500, seed: 4 })).not.toEqual(a);
  });
});
