// One call as the batch view shows it: its row in the calls table and its details panel.
import type { DashboardCallFragment } from '../../codegen/graphql.ts';
import { h } from '../dom.ts';
import { compactDateTime, dateTime, duration, retryWaitText, windowWaitText, words } from '../format.ts';
import { statusBadge } from '../widgets.ts';

export type CallView = DashboardCallFragment;

/** Same-origin path of a signed recording link, so it plays whatever host name the page was opened with. */
function sameOrigin(url: string): string {
  try {
    const u = new URL(url, location.href);
    return u.pathname + u.search;
  } catch {
    return url;
  }
}

/** Put back in line by the batch's retry policy, waiting for its next attempt. */
export const waitsForRetry = (c: CallView) => c.status === 'queued' && c.nextAttemptAt !== null;
/** Not placed yet because its calling window is closed. */
export const waitsForWindow = (c: CallView) => c.waitReason === 'CALLING_WINDOW';
/** Held back: its number reached the account's frequency cap. */
const heldByCap = (c: CallView) => c.waitReason === 'FREQUENCY_CAP';

/** Under the status: when and why a waiting call waits. */
function waitNote(c: CallView, maxAttempts: number | null): HTMLElement | null {
  if (waitsForRetry(c))
    return h(
      'div',
      { class: 'retry-wait small muted', 'data-testid': 'retry-wait', title: `Next attempt ${dateTime(c.nextAttemptAt)}` },
      retryWaitText(c, maxAttempts),
    );
  if (waitsForWindow(c))
    return h(
      'div',
      { class: 'retry-wait small muted', 'data-testid': 'window-wait', title: `Window opens ${dateTime(c.nextAttemptAt)}` },
      windowWaitText(c),
    );
  if (heldByCap(c))
    return h(
      'div',
      { class: 'retry-wait small muted', 'data-testid': 'cap-wait', title: `Held until ${dateTime(c.nextAttemptAt)}` },
      `frequency cap: held until ${compactDateTime(c.nextAttemptAt)}`,
    );
  return null;
}

/**
 * The cells of the call's row: #, contact, phone, status, duration, transcript, ended. A call
 * waiting for a retry says under its status when and why (`maxAttempts`: the batch's, once known).
 */
export function callCells(c: CallView, maxAttempts: number | null): HTMLElement[] {
  return [
    h('td', { class: 'num muted' }, c.seq),
    h('td', null, c.name ? [c.name, h('div', { class: 'muted small mono' }, c.externalId)] : h('span', { class: 'mono' }, c.externalId)),
    h('td', { class: 'mono small' }, c.phoneNumber),
    h('td', null, statusBadge(c.status), waitNote(c, maxAttempts)),
    h('td', { class: 'num' }, duration(c.durationSeconds)),
    h('td', { class: 'small' }, c.transcriptStatus ?? '—'),
    h('td', { class: 'small nowrap', title: dateTime(c.completedAt) }, compactDateTime(c.completedAt)),
  ];
}

/** The details panel: facts, attempts (`attempts`, kept up to date by its owner), summary, outcomes, recording and transcript. */
export function callDetail(c: CallView, maxAttempts: number | null, attempts: HTMLElement): HTMLElement[] {
  const outcomes = c.outcomes && typeof c.outcomes === 'object' ? Object.entries(c.outcomes as Record<string, unknown>) : [];
  return [
    h('div', { class: 'detail-head' }, h('h2', null, c.name ?? c.externalId), statusBadge(c.status)),
    h(
      'dl',
      { class: 'facts' },
      [
        ['Contact id', c.externalId],
        ['Phone', c.phoneNumber],
        ['Placed', dateTime(c.timestamp)],
        ['Ended', dateTime(c.completedAt)],
        ['Duration', duration(c.durationSeconds)],
        ['Talk time', duration(c.answerDurationSeconds)],
        ['Hung up by', c.hangupBy ?? '—'],
        ['Reason', c.disconnectReason ?? '—'],
        ['Attempts', maxAttempts ? `${c.attemptCount} of ${maxAttempts}` : String(c.attemptCount)],
        waitsForRetry(c) ? ['Next attempt', `${dateTime(c.nextAttemptAt)}${c.retryReason ? ` (last: ${words(c.retryReason)})` : ''}`] : null,
        waitsForWindow(c) ? ['Waits for', windowWaitText(c)] : null,
        heldByCap(c) ? ['Waits for', `the account's frequency cap, until ${dateTime(c.nextAttemptAt)}`] : null,
        c.timezone ? ['Time zone', c.timezone.split(',').join(', ')] : null,
      ]
        .filter((f): f is string[] => f !== null)
        .map(([k, v]) => [h('dt', null, k), h('dd', null, v)]),
    ),
    h('h3', null, 'Attempts'),
    attempts,
    h('h3', null, 'Summary'),
    c.summary
      ? h('p', { 'data-testid': 'call-summary' }, c.summary)
      : h('p', { class: 'muted' }, c.transcriptStatus === 'processing' ? 'Being analysed…' : 'No summary.'),
    h('h3', null, 'Outcomes'),
    outcomes.length
      ? h(
          'dl',
          { class: 'facts outcomes' },
          outcomes.map(([k, v]) => [h('dt', null, k), h('dd', null, String(v))]),
        )
      : h('p', { class: 'muted' }, 'None yet.'),
    h('h3', null, 'Recording'),
    c.recordingUrl
      ? h('audio', { controls: true, preload: 'none', src: sameOrigin(c.recordingUrl), 'data-testid': 'recording' })
      : h('p', { class: 'muted' }, 'No recording.'),
    h('h3', null, 'Transcript'),
    c.llmTranscript ? h('pre', { class: 'transcript' }, c.llmTranscript) : h('p', { class: 'muted' }, 'No transcript.'),
  ];
}

/** Page reads and live updates cross on the wire: a state never replaces a later one. */
export const newer = (a: CallView, b: CallView): CallView => (Date.parse(a.updatedAt) >= Date.parse(b.updatedAt) ? a : b);
