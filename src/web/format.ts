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
  return d.toLocaleString(undefined, { month: 'short', day: 'numeric', ...(d.getFullYear() === now.getFullYear() ? {} : { year: 'numeric' }), ...time });
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

export const CALL_STATUSES = ['pending', 'queued', 'ringing', 'answered', 'in_progress', 'completed', 'failed', 'no_answer', 'busy', 'cancelled'] as const;
