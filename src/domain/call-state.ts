// Call lifecycle rules. Pure: the worker and services use these to decide whether a status write
// is legal and how the batch counters move with it.

export const CALL_STATUSES = [
  'pending',
  'queued',
  'ringing',
  'answered',
  'in_progress',
  'completed',
  'failed',
  'no_answer',
  'busy',
  'cancelled',
] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];

export const TERMINAL_CALL_STATUSES: ReadonlySet<CallStatus> = new Set<CallStatus>(['completed', 'failed', 'no_answer', 'busy', 'cancelled']);

export const TRANSCRIPT_STATUSES = ['pending', 'processing', 'ready', 'failed'] as const;
export type TranscriptStatus = (typeof TRANSCRIPT_STATUSES)[number];

export type CounterBucket = 'queued' | 'in_progress' | 'completed' | 'failed' | 'cancelled';
export const COUNTER_BUCKETS: readonly CounterBucket[] = ['queued', 'in_progress', 'completed', 'failed', 'cancelled'];

export function isCallStatus(value: unknown): value is CallStatus {
  return typeof value === 'string' && (CALL_STATUSES as readonly string[]).includes(value);
}

export function isTerminalCall(s: CallStatus): boolean {
  return TERMINAL_CALL_STATUSES.has(s);
}

// The batch exposes five counters but calls have ten statuses; this mapping keeps
// queued+in_progress+completed+failed+cancelled = accepted_contacts (docs/dispatch.md).
const BUCKET: Record<CallStatus, CounterBucket> = {
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
};

export function counterBucket(s: CallStatus): CounterBucket {
  return BUCKET[s];
}

// Cancelling an in-flight call goes through the provider's hangup (ending as completed/failed with
// hangup_by system), so only not-yet-dialled calls can become `cancelled`.
// queued -> queued is a requeue (lease expired, or a retry of a transient dial failure).
// ringing -> queued: an unanswered attempt that the batch's retry policy tries again later.
// A dial takes a call from pending (never dialled) or queued (put back in line) to ringing.
// ringing -> completed: a provider (or recovery from its records) may report the end of an
// answered call without the intermediate states having been seen.
const NEXT: Record<CallStatus, readonly CallStatus[]> = {
  pending: ['queued', 'ringing', 'cancelled'],
  queued: ['queued', 'ringing', 'cancelled', 'failed'],
  ringing: ['answered', 'completed', 'no_answer', 'busy', 'failed', 'queued'],
  answered: ['in_progress', 'completed', 'failed'],
  in_progress: ['completed', 'failed'],
  completed: [],
  failed: [],
  no_answer: [],
  busy: [],
  cancelled: [],
};

export function canTransitionCall(from: CallStatus, to: CallStatus): boolean {
  return NEXT[from].includes(to);
}

/**
 * Counter changes for one call moving `from` -> `to` (`from` null: the call is being created).
 * For an existing call the values always sum to zero, so the accepted_contacts rule survives.
 */
export function counterDelta(from: CallStatus | null, to: CallStatus): Partial<Record<CounterBucket, number>> {
  const toBucket = BUCKET[to];
  if (from === null) return { [toBucket]: 1 };
  const fromBucket = BUCKET[from];
  if (fromBucket === toBucket) return {};
  return { [fromBucket]: -1, [toBucket]: 1 };
}
