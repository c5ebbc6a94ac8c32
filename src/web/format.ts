import type { DashboardProgressFragment } from '../codegen/graphql.ts';

export type Counters = Pick<DashboardProgressFragment, 'queued' | 'inProgress' | 'completed' | 'failed' | 'cancelled' | 'acceptedContacts'>;

export function dateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/** For table cells: the time alone when it is today, else a short date and time (full value in dateTime). */
export function compactDateTime(iso: string | null | undefined, now = new Date()): string {
  if (!iso) return '—';
  const d = new Date(iso);
  const time = { hour: '2-digit', minute: '2-digit' } as const;
  if (d.toDateString() === now.toDateString()) return d.toLocaleTimeString(undefined, { ...time, second: '2-digit' });
  return d.toLocaleString(undefined, {
    month: 'short',
    day: 'numeric',
    ...(d.getFullYear() === now.getFullYear() ? {} : { year: 'numeric' }),
    ...time,
  });
}

export function duration(seconds: number | null | undefined): string {
  if (seconds == null) return '—';
  const m = Math.floor(seconds / 60);
  const s = seconds % 60;
  return m ? `${m}m ${String(s).padStart(2, '0')}s` : `${s}s`;
}

export const shortId = (id: string) => (id.length > 16 ? `${id.slice(0, 6)}…${id.slice(-6)}` : id);

export const done = (c: Counters) => c.completed + c.failed + c.cancelled;

export function percent(n: number, of: number): number {
  return of > 0 ? Math.round((n / of) * 1000) / 10 : 0;
}

/** The operations a batch in this status offers. */
export function operationsFor(b: { status: string; startedAt: string | null }): ('start' | 'pause' | 'resume' | 'cancel')[] {
  switch (b.status) {
    case 'pending':
      return ['start', 'cancel'];
    case 'paused':
      return b.startedAt ? ['resume', 'cancel'] : ['start', 'cancel'];
    case 'queued':
    case 'dispatching':
    case 'running':
      return ['pause', 'cancel'];
    default:
      return [];
  }
}

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

/** A status or outcome as words: `no_answer` → `no answer`. */
export const words = (s: string) => s.replaceAll('_', ' ');

/** A delay in the largest units that divide it: `1 h`, `1 h 30 min`, `90 s` → `1 min 30 s`. */
export function spacing(seconds: number): string {
  const parts: string[] = [];
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h) parts.push(`${h} h`);
  if (m) parts.push(`${m} min`);
  if (s || !parts.length) parts.push(`${s} s`);
  return parts.join(' ');
}

/** A batch's retry policy in a sentence: `up to 3 attempts, 1 h apart, after no answer, busy, voicemail`. */
export function retryPolicyText(r: { maxAttempts: number; on: readonly string[]; delaySeconds: number }): string {
  if (r.maxAttempts <= 1) return '1 attempt, no retries';
  return `up to ${r.maxAttempts} attempts, ${spacing(r.delaySeconds)} apart, after ${r.on.map(words).join(', ')}`;
}

/** What a call waiting for a retry waits for: `retry at 15:01:05 (attempt 2 of 3, last: busy)`. */
export function retryWaitText(
  c: { nextAttemptAt: string | null; attemptCount: number; retryReason: string | null },
  maxAttempts: number | null,
  now = new Date(),
): string {
  const of = maxAttempts ? ` of ${maxAttempts}` : '';
  const last = c.retryReason ? `, last: ${words(c.retryReason)}` : '';
  return `retry at ${compactDateTime(c.nextAttemptAt, now)} (attempt ${c.attemptCount + 1}${of}${last})`;
}

const WEEK = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

/** A calling window in a line: `09:00-20:00, mon-fri, each contact's own time`. */
export function windowText(w: { start: string; end: string; days: readonly string[]; timezone: string }): string {
  const idx = w.days.map((d) => WEEK.indexOf(d));
  const run = idx.every((v, k) => k === 0 || v === idx[k - 1] + 1) && w.days.length > 2;
  const days = w.days.length === 7 ? 'every day' : run ? `${w.days[0]}-${w.days[w.days.length - 1]}` : w.days.join(', ');
  return `${w.start}-${w.end}, ${days}, ${w.timezone === 'recipient' ? "each contact's own time" : w.timezone}`;
}

/**
 * Why a call that has not been placed yet waits: `window opens Mar 9, 09:00 (09:00 America/New_York)`.
 * The time in the contact's first zone says what the window means where they are.
 */
export function windowWaitText(c: { nextAttemptAt: string | null; timezone: string | null }, now = new Date()): string {
  const zone = c.timezone?.split(',')[0];
  let local = '';
  if (zone && c.nextAttemptAt) {
    try {
      local = ` (${new Date(c.nextAttemptAt).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', timeZone: zone })} ${zone}${c.timezone!.includes(',') ? ' and others' : ''})`;
    } catch {
      // A zone this browser does not know: the viewer's time alone.
    }
  }
  return `calling window opens ${compactDateTime(c.nextAttemptAt, now)}${local}`;
}
