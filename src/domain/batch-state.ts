// Batch lifecycle rules. Operator operations (start/pause/resume/cancel) go through
// applyBatchOperation; the worker's own moves (queued -> dispatching -> running -> completed)
// are checked with canTransitionBatch.

export const BATCH_STATUSES = ['pending', 'paused', 'queued', 'dispatching', 'running', 'completed', 'cancelled'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

export type BatchOperation = 'start' | 'pause' | 'resume' | 'cancel';
export const BATCH_OPERATIONS: readonly BatchOperation[] = ['start', 'pause', 'resume', 'cancel'];

export type StartMode = 'manual' | 'immediate' | 'scheduled';

export type BatchOperationResult = { ok: true; status: BatchStatus } | { ok: false; message: string };

export function isBatchStatus(value: unknown): value is BatchStatus {
  return typeof value === 'string' && (BATCH_STATUSES as readonly string[]).includes(value);
}

export function isBatchTerminal(s: BatchStatus): boolean {
  return s === 'completed' || s === 'cancelled';
}

// `start` also accepts `paused` because a manual batch waits in `paused` before its first start,
// and `resume` accepts it for the same reason: clients cannot tell the two kinds of pause apart.
const OPERATION_FROM: Record<BatchOperation, readonly BatchStatus[]> = {
  start: ['pending', 'paused'],
  pause: ['queued', 'dispatching', 'running'],
  resume: ['paused'],
  cancel: ['pending', 'paused', 'queued', 'dispatching', 'running'],
};

const OPERATION_TO: Record<BatchOperation, BatchStatus> = {
  start: 'queued',
  pause: 'paused',
  resume: 'queued',
  cancel: 'cancelled',
};

export function applyBatchOperation(status: BatchStatus, op: BatchOperation): BatchOperationResult {
  if (!OPERATION_FROM[op].includes(status)) {
    return { ok: false, message: `Cannot ${op} a batch that is ${status}` };
  }
  return { ok: true, status: OPERATION_TO[op] };
}

/**
 * Stored status right after the create transaction. The create response itself always says
 * `pending` (every sample does); a scheduler moves scheduled batches to `queued` at scheduled_at.
 */
export function initialStatusAfterCreate(startMode: StartMode): BatchStatus {
  switch (startMode) {
    case 'immediate':
      return 'queued';
    case 'manual':
      return 'paused';
    case 'scheduled':
      return 'pending';
  }
}

export const STATUS_RETURNED_BY_CREATE: BatchStatus = 'pending';

/** Stored statuses of a batch that can still place a call. */
export const UNFINISHED_BATCH_STATUSES: readonly string[] = ['pending', 'queued', 'dispatching', 'running', 'paused'];

// The spec's `active` list filter; it names call statuses too, which a batch never has, so they
// are harmless in an `IN (...)` and kept for fidelity with the contract.
export const ACTIVE_FILTER_STATUSES: readonly string[] = [
  'queued',
  'running',
  'dispatching',
  'ringing',
  'answered',
  'in_progress',
  'paused',
  'pending',
];

// Every move the system may make, operator operations included. Worker-only moves:
// scheduler pending -> queued; dispatch queued -> dispatching -> running; all calls terminal ->
// completed (also from paused, when the last in-flight call of a paused batch ends).
const BATCH_NEXT: Record<BatchStatus, readonly BatchStatus[]> = {
  pending: ['queued', 'cancelled'],
  paused: ['queued', 'completed', 'cancelled'],
  queued: ['dispatching', 'running', 'paused', 'completed', 'cancelled'],
  dispatching: ['running', 'paused', 'completed', 'cancelled'],
  running: ['dispatching', 'paused', 'completed', 'cancelled'],
  completed: [],
  cancelled: [],
};

export function canTransitionBatch(from: BatchStatus, to: BatchStatus): boolean {
  return BATCH_NEXT[from].includes(to);
}

/** Top-level `status` of the batch results endpoint. */
export function resultsStatus(batch: BatchStatus, nonTerminalCalls: number): 'pending' | 'completed' | 'cancelled' {
  if (batch === 'cancelled') return 'cancelled';
  return nonTerminalCalls > 0 ? 'pending' : 'completed';
}
