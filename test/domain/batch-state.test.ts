import { describe, expect, it } from 'vitest';
import {
  ACTIVE_FILTER_STATUSES,
  BATCH_OPERATIONS,
  BATCH_STATUSES,
  applyBatchOperation,
  canTransitionBatch,
  initialStatusAfterCreate,
  isBatchStatus,
  isBatchTerminal,
  resultsStatus,
  type BatchOperation,
  type BatchStatus,
} from '../../src/domain/batch-state.ts';

const LEGAL: Record<BatchOperation, Partial<Record<BatchStatus, BatchStatus>>> = {
  start: { pending: 'queued', paused: 'queued' },
  pause: { queued: 'paused', dispatching: 'paused', running: 'paused' },
  resume: { paused: 'queued' },
  cancel: { pending: 'cancelled', paused: 'cancelled', queued: 'cancelled', dispatching: 'cancelled', running: 'cancelled' },
};

describe('applyBatchOperation', () => {
  for (const op of BATCH_OPERATIONS) {
    for (const status of BATCH_STATUSES) {
      const target = LEGAL[op][status];
      if (target) {
        it(`${op} on ${status} -> ${target}`, () => {
          expect(applyBatchOperation(status, op)).toEqual({ ok: true, status: target });
        });
      } else {
        it(`${op} on ${status} is refused`, () => {
          expect(applyBatchOperation(status, op)).toEqual({ ok: false, message: `Cannot ${op} a batch that is ${status}` });
        });
      }
    }
  }

  it('lets a manual batch waiting in paused be started or resumed alike', () => {
    const waiting = initialStatusAfterCreate('manual');
    expect(applyBatchOperation(waiting, 'start')).toEqual({ ok: true, status: 'queued' });
    expect(applyBatchOperation(waiting, 'resume')).toEqual({ ok: true, status: 'queued' });
  });

  it('uses the wording that becomes the 409 message', () => {
    expect(applyBatchOperation('completed', 'pause')).toEqual({ ok: false, message: 'Cannot pause a batch that is completed' });
  });

  it('operation results are always allowed batch transitions', () => {
    for (const op of BATCH_OPERATIONS) {
      for (const status of BATCH_STATUSES) {
        const r = applyBatchOperation(status, op);
        if (r.ok) expect(canTransitionBatch(status, r.status), `${op} on ${status}`).toBe(true);
      }
    }
  });
});

describe('batch lifecycle helpers', () => {
  it('stores the per-mode status after create', () => {
    expect(initialStatusAfterCreate('immediate')).toBe('queued');
    expect(initialStatusAfterCreate('manual')).toBe('paused');
    expect(initialStatusAfterCreate('scheduled')).toBe('pending');
  });

  it('terminal batches are completed and cancelled only, and never move', () => {
    expect(BATCH_STATUSES.filter(isBatchTerminal)).toEqual(['completed', 'cancelled']);
    for (const from of ['completed', 'cancelled'] as const) {
      expect(BATCH_STATUSES.filter((to) => canTransitionBatch(from, to))).toEqual([]);
    }
  });

  it('allows the worker path queued -> dispatching -> running -> completed but not backwards to pending', () => {
    expect(canTransitionBatch('pending', 'queued')).toBe(true);
    expect(canTransitionBatch('queued', 'dispatching')).toBe(true);
    expect(canTransitionBatch('dispatching', 'running')).toBe(true);
    expect(canTransitionBatch('running', 'completed')).toBe(true);
    expect(canTransitionBatch('running', 'pending')).toBe(false);
    expect(canTransitionBatch('pending', 'running')).toBe(false);
  });

  it('active filter covers every non-terminal batch status and no terminal one', () => {
    for (const s of BATCH_STATUSES) expect(ACTIVE_FILTER_STATUSES.includes(s)).toBe(!isBatchTerminal(s));
    expect([...ACTIVE_FILTER_STATUSES].sort()).toEqual([
      'answered',
      'dispatching',
      'in_progress',
      'paused',
      'pending',
      'queued',
      'ringing',
      'running',
    ]);
  });

  it('recognises status strings', () => {
    expect(isBatchStatus('dispatching')).toBe(true);
    expect(isBatchStatus('active')).toBe(false);
  });

  it('derives the results status', () => {
    expect(resultsStatus('running', 3)).toBe('pending');
    expect(resultsStatus('running', 0)).toBe('completed');
    expect(resultsStatus('completed', 0)).toBe('completed');
    expect(resultsStatus('cancelled', 2)).toBe('cancelled');
    expect(resultsStatus('cancelled', 0)).toBe('cancelled');
    expect(resultsStatus('paused', 1)).toBe('pending');
  });
});
