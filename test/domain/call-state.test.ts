import { describe, expect, it } from 'vitest';
import {
  CALL_STATUSES,
  COUNTER_BUCKETS,
  TERMINAL_CALL_STATUSES,
  canTransitionCall,
  counterBucket,
  counterDelta,
  isCallStatus,
  type CallStatus,
} from '../../src/domain/call-state.ts';

const LEGAL: Record<CallStatus, CallStatus[]> = {
  pending: ['queued', 'ringing', 'cancelled'],
  queued: ['ringing', 'cancelled', 'failed', 'queued'],
  // -> queued: an unanswered attempt put back in line by the batch's retry policy.
  ringing: ['answered', 'completed', 'no_answer', 'busy', 'failed', 'queued'],
  answered: ['in_progress', 'completed', 'failed'],
  in_progress: ['completed', 'failed'],
  completed: [],
  failed: [],
  no_answer: [],
  busy: [],
  cancelled: [],
};

describe('call statuses', () => {
  it('terminal set is exactly completed, failed, no_answer, busy, cancelled', () => {
    expect([...TERMINAL_CALL_STATUSES].sort()).toEqual(['busy', 'cancelled', 'completed', 'failed', 'no_answer']);
  });

  it('maps every status to the documented counter bucket', () => {
    expect(Object.fromEntries(CALL_STATUSES.map((s) => [s, counterBucket(s)]))).toEqual({
      pending: 'queued',
      queued: 'queued',
      ringing: 'in_progress',
      answered: 'in_progress',
      in_progress: 'in_progress',
      completed: 'completed',
      failed: 'failed',
      no_answer: 'failed',
      busy: 'failed',
      cancelled: 'cancelled',
    });
  });

  it('recognises status strings', () => {
    expect(isCallStatus('no_answer')).toBe(true);
    expect(isCallStatus('active')).toBe(false);
    expect(isCallStatus(3)).toBe(false);
  });
});

describe('canTransitionCall', () => {
  for (const from of CALL_STATUSES) {
    for (const to of CALL_STATUSES) {
      const legal = LEGAL[from].includes(to);
      it(`${from} -> ${to} is ${legal ? 'legal' : 'illegal'}`, () => {
        expect(canTransitionCall(from, to)).toBe(legal);
      });
    }
  }

  it('terminal statuses never move', () => {
    for (const from of TERMINAL_CALL_STATUSES) {
      expect(CALL_STATUSES.filter((to) => canTransitionCall(from, to))).toEqual([]);
    }
  });
});

describe('counterDelta', () => {
  it('moves one call between buckets', () => {
    expect(counterDelta('queued', 'ringing')).toEqual({ queued: -1, in_progress: 1 });
    expect(counterDelta('ringing', 'busy')).toEqual({ in_progress: -1, failed: 1 });
    expect(counterDelta('pending', 'cancelled')).toEqual({ queued: -1, cancelled: 1 });
    expect(counterDelta('in_progress', 'completed')).toEqual({ in_progress: -1, completed: 1 });
  });

  it('is empty within a bucket', () => {
    expect(counterDelta('pending', 'queued')).toEqual({});
    expect(counterDelta('ringing', 'answered')).toEqual({});
    expect(counterDelta('queued', 'queued')).toEqual({});
  });

  it('adds one to the bucket of a newly created call', () => {
    expect(counterDelta(null, 'pending')).toEqual({ queued: 1 });
    expect(counterDelta(null, 'cancelled')).toEqual({ cancelled: 1 });
  });

  it('sums to zero for every pair of statuses', () => {
    for (const from of CALL_STATUSES) {
      for (const to of CALL_STATUSES) {
        const sum = Object.values(counterDelta(from, to)).reduce((a, b) => a + (b ?? 0), 0);
        expect(sum, `${from} -> ${to}`).toBe(0);
      }
    }
  });

  it('keeps the accepted_contacts rule along a whole lifecycle', () => {
    const counters = Object.fromEntries(COUNTER_BUCKETS.map((b) => [b, 0])) as Record<string, number>;
    const apply = (d: Partial<Record<string, number>>) => {
      for (const [k, v] of Object.entries(d)) counters[k] += v ?? 0;
    };
    const paths: CallStatus[][] = [
      ['pending', 'ringing', 'answered', 'in_progress', 'completed'],
      ['pending', 'queued', 'ringing', 'no_answer'],
      ['pending', 'ringing', 'completed'],
      ['pending', 'cancelled'],
      ['pending', 'queued', 'failed'],
    ];
    for (const path of paths) apply(counterDelta(null, path[0]));
    for (const path of paths) {
      for (let i = 1; i < path.length; i++) {
        expect(canTransitionCall(path[i - 1], path[i])).toBe(true);
        apply(counterDelta(path[i - 1], path[i]));
        expect(Object.values(counters).reduce((a, b) => a + b, 0)).toBe(paths.length);
      }
    }
    expect(counters).toEqual({ queued: 0, in_progress: 0, completed: 2, failed: 2, cancelled: 1 });
  });
});
