// The checker: reads the database, the webhook receiver's log and the fake provider's log after a
// round has settled and lists every broken invariant. Ownership comes from the calls' history:
// a claim's `dial` entry names its worker, an `adopted` entry the adopter; a `requeue` or a
// `recovered` settle (by another worker) ends the owner's hold. A process is known to the provider
// by its incarnation's name (the path of its RETELL_BASE_URL), a worker's lease owner id being that
// name and a random suffix (`w1.g2#a1b2c3`).
import type { Database } from '../../src/db/client.ts';
import type { ProviderLogLine } from './provider-log.ts';
import type { Received } from './cluster.ts';

export const INVARIANTS = {
  ends_once: 'every accepted call ends exactly once (terminal, one ending in its history), every batch closes',
  number_dials: 'no number dialled more often than its policy allows, never twice at once; one provider call per dial',
  owner_acts: 'no create-phone-call or stop-call by a process that did not own the call at that moment',
  history: "the call's history is one unbroken chain of allowed transitions (a stale write would break it)",
  answered_kept: "every answered call's transcript and result kept",
  terminal_webhook: 'every dialled call gets exactly one terminal webhook, and it was delivered',
  counters: "the batch's counters equal its calls' statuses and sum to accepted_contacts",
} as const;
export type Invariant = keyof typeof INVARIANTS;

export interface Violation {
  invariant: Invariant;
  detail: string;
}

export interface RoundBatch {
  id: string;
  maxDialsPerCall: number;
  maxDialsPerNumber: number;
}

interface EventRow {
  id: bigint;
  call_id: string;
  from_status: string | null;
  to_status: string;
  detail: Record<string, any> | null;
  at: Date;
}

const TERMINAL = new Set(['completed', 'failed', 'no_answer', 'busy', 'cancelled']);
const IN_FLIGHT = new Set(['ringing', 'answered', 'in_progress']);
const TERMINAL_HOOKS = new Set(['call.completed', 'call.failed', 'call.cancelled']);
const bucket = (s: string) =>
  s === 'pending' || s === 'queued'
    ? 'queued'
    : IN_FLIGHT.has(s)
      ? 'inProgress'
      : s === 'completed'
        ? 'completed'
        : s === 'cancelled'
          ? 'cancelled'
          : 'failed';
const ALLOWED: Record<string, string[]> = {
  pending: ['queued', 'ringing', 'cancelled', 'failed'],
  queued: ['ringing', 'cancelled', 'failed', 'pending'],
  ringing: ['answered', 'in_progress', 'completed', 'no_answer', 'busy', 'failed', 'queued', 'cancelled'],
  answered: ['in_progress', 'completed', 'failed', 'queued', 'cancelled'],
  in_progress: ['completed', 'failed', 'queued', 'cancelled'],
};
const procOf = (owner: unknown) => (typeof owner === 'string' ? owner.split('#')[0]! : null);

export interface CheckInput {
  db: Database;
  batches: RoundBatch[];
  /** The provider's log lines (the whole campaign's: calls are matched by our call id). */
  provider: ProviderLogLine[];
  received: Received[];
  /** How far apart two processes' clocks may be (ms): a stop this close to a takeover is not judged. */
  clockToleranceMs: number;
}

export async function check(i: CheckInput): Promise<Violation[]> {
  const out: Violation[] = [];
  const v = (invariant: Invariant, detail: string) => out.push({ invariant, detail });
  const ids = i.batches.map((b) => b.id);
  const batches = await i.db.prisma.batch.findMany({ where: { id: { in: ids } } });
  const calls = await i.db.prisma.call.findMany({ where: { batchId: { in: ids } } });
  const events = await i.db.prisma.$queryRaw<EventRow[]>`
    SELECT e.id, e.call_id, e.from_status, e.to_status, e.detail, e.at FROM call_events e JOIN calls c ON c.id = e.call_id
     WHERE c.batch_id = ANY(${ids}::text[]) ORDER BY e.id`;
  const hooks = await i.db.prisma.$queryRaw<{ id: string; call_id: string | null; event_type: string; status: string }[]>`
    SELECT id, payload->'data'->>'call_id' AS call_id, event_type, status FROM webhook_deliveries WHERE batch_id = ANY(${ids}::text[])`;
  const byCall = new Map<string, EventRow[]>();
  for (const e of events) byCall.set(e.call_id, [...(byCall.get(e.call_id) ?? []), e]);
  const callIds = new Set(calls.map((c) => c.id));
  const lines = i.provider.filter((l) => l.callId && callIds.has(l.callId));
  const creates = lines.filter((l) => l.kind === 'create');
  const ends = new Map(i.provider.filter((l) => l.kind === 'ended').map((l) => [l.retellCallId!, l]));
  const policy = new Map(i.batches.map((b) => [b.id, b]));
  const receivedIds = new Set(i.received.map((r) => r.id));

  for (const b of batches) {
    if (b.status !== 'completed' && b.status !== 'cancelled') v('ends_once', `batch ${b.id} still ${b.status}`);
    const mine = calls.filter((c) => c.batchId === b.id);
    const counts = { queued: 0, inProgress: 0, completed: 0, failed: 0, cancelled: 0 };
    for (const c of mine) counts[bucket(c.status)] += 1;
    const stored = { queued: b.queued, inProgress: b.inProgress, completed: b.completed, failed: b.failed, cancelled: b.cancelled };
    if (JSON.stringify(stored) !== JSON.stringify(counts))
      v('counters', `batch ${b.id} counters ${JSON.stringify(stored)}, rows ${JSON.stringify(counts)}`);
    if (b.queued + b.inProgress + b.completed + b.failed + b.cancelled !== b.acceptedContacts)
      v(
        'counters',
        `batch ${b.id} counters sum to ${b.queued + b.inProgress + b.completed + b.failed + b.cancelled}, accepted ${b.acceptedContacts}`,
      );
  }

  const perNumber = new Map<string, { calls: ProviderLogLine[]; max: number }>();
  for (const c of calls) {
    const evs = byCall.get(c.id) ?? [];
    const p = policy.get(c.batchId)!;
    // ends_once
    const endings = evs.filter((e) => TERMINAL.has(e.to_status) && !TERMINAL.has(e.from_status ?? ''));
    if (!TERMINAL.has(c.status)) v('ends_once', `call ${c.id} still ${c.status}`);
    else if (endings.length !== 1 || endings[0]!.to_status !== c.status)
      v('ends_once', `call ${c.id} (${c.status}) ended ${endings.length} times: ${endings.map((e) => e.to_status).join(', ')}`);
    // history
    let status: string | null = null;
    for (const e of evs) {
      if (e.from_status === null) {
        status = e.to_status;
        continue;
      }
      if (status !== null && e.from_status !== status) v('history', `call ${c.id} event ${e.id} moves from ${e.from_status}, the call was ${status}`);
      if (e.from_status !== e.to_status && !(ALLOWED[e.from_status] ?? []).includes(e.to_status))
        v('history', `call ${c.id} event ${e.id}: ${e.from_status} -> ${e.to_status}`);
      status = e.to_status;
    }
    // Ownership over the history: [event id, owner process or null, time].
    const holds: { owner: string | null; at: number; event: EventRow }[] = [];
    for (const e of evs) {
      const d = e.detail ?? {};
      if (d.event === 'dial' && d.worker) holds.push({ owner: procOf(d.worker), at: e.at.getTime(), event: e });
      else if (d.event === 'adopted') holds.push({ owner: procOf(d.worker), at: e.at.getTime(), event: e });
      else if (d.event === 'requeue' || d.event === 'recovered') holds.push({ owner: null, at: e.at.getTime(), event: e });
    }
    const mineCreates = creates.filter((l) => l.callId === c.id);
    // One provider call per dial of ours.
    const perAttempt = new Map<string, ProviderLogLine[]>();
    for (const l of mineCreates) perAttempt.set(String(l.attempt), [...(perAttempt.get(String(l.attempt)) ?? []), l]);
    for (const [attempt, ls] of perAttempt)
      if (ls.length > 1) v('number_dials', `call ${c.id} attempt ${attempt} placed ${ls.length} times (by ${ls.map((l) => l.proc).join(', ')})`);
    if (mineCreates.length > p.maxDialsPerCall)
      v('number_dials', `call ${c.id} dialled ${mineCreates.length} times, policy allows ${p.maxDialsPerCall}`);
    for (const l of mineCreates) {
      const dial = evs.find((e) => e.detail?.event === 'dial' && String(e.detail.attempt) === String(l.attempt));
      if (!dial) {
        v('owner_acts', `call ${c.id} attempt ${l.attempt} placed by ${l.proc} with no dial of it in the history`);
        continue;
      }
      const owner = [...holds].reverse().find((h) => h.event.id <= dial.id)?.owner ?? null;
      if (owner !== l.proc) v('owner_acts', `call ${c.id} attempt ${l.attempt} placed by ${l.proc}; the call's owner at that dial was ${owner}`);
      const lost = holds.find((h) => h.event.id > dial.id && h.owner !== l.proc && h.at < l.t - i.clockToleranceMs);
      if (lost)
        v(
          'owner_acts',
          `call ${c.id} attempt ${l.attempt} placed by ${l.proc} at ${new Date(l.t).toISOString()}, after ${lost.owner ?? 'recovery'} took it over (${lost.event.detail?.event} at ${lost.at ? new Date(lost.at).toISOString() : '?'})`,
        );
      const n = l.to!;
      const entry = perNumber.get(n) ?? { calls: [], max: p.maxDialsPerNumber };
      entry.calls.push(l);
      perNumber.set(n, entry);
    }
    for (const s of lines.filter((l) => l.kind === 'stop' && l.callId === c.id)) {
      // A stop of a call still going at the provider is the sender's to send only within one of its
      // holds: from the hold's entry to the next one's, each end widened by the clock skew allowed
      // (entries carry their writer's clock, the stop the provider's).
      if (s.status === 'ended' || s.status === 'not_connected') continue;
      const tol = i.clockToleranceMs;
      const within = holds.some((h, k) => h.owner === s.proc && h.at - tol <= s.t && s.t < (holds[k + 1]?.at ?? Infinity) + tol);
      if (!within) {
        const last = holds.filter((h) => h.at <= s.t).at(-1);
        v(
          'owner_acts',
          `call ${c.id}: stop-call by ${s.proc} at ${new Date(s.t).toISOString()} while ${last?.owner ?? 'nobody'} held it (${last?.event.detail?.event ?? 'no hold'}${last ? ` at ${new Date(last.at).toISOString()}` : ''}), provider call ${s.status}`,
        );
      }
    }
    // answered_kept: the provider's last call for this call was answered (it has a transcript).
    const last = mineCreates.at(-1);
    const lastEnd = last ? ends.get(last.retellCallId!) : undefined;
    if (lastEnd?.answered) {
      if (c.status !== 'completed' || !c.llmTranscript || c.transcriptStatus !== 'ready' || !c.summary) {
        v(
          'answered_kept',
          `call ${c.id} answered at the provider (${last!.retellCallId}) but stored ${c.status}, transcript ${c.llmTranscript ? 'kept' : 'missing'}, analysis ${c.transcriptStatus}, summary ${c.summary ? 'kept' : 'missing'}`,
        );
      }
    }
    // terminal_webhook
    if (c.attempts > 0 || mineCreates.length > 0) {
      const terminal = hooks.filter((h) => h.call_id === c.id && TERMINAL_HOOKS.has(h.event_type));
      if (terminal.length !== 1)
        v('terminal_webhook', `call ${c.id} has ${terminal.length} terminal webhooks (${terminal.map((h) => h.event_type).join(', ')})`);
      else if (!receivedIds.has(terminal[0]!.id))
        v(
          'terminal_webhook',
          `call ${c.id}'s ${terminal[0]!.event_type} (${terminal[0]!.id}) never reached the receiver (delivery ${terminal[0]!.status})`,
        );
    }
  }
  for (const [n, { calls: ls, max }] of perNumber) {
    if (ls.length > max) v('number_dials', `${n} dialled ${ls.length} times, its policy allows ${max}`);
    const spans = ls
      .map((l) => ({ from: l.answeredAt ?? l.t, to: ends.get(l.retellCallId!)?.t ?? Infinity, id: l.retellCallId }))
      .sort((a, b) => a.from - b.from);
    for (let k = 1; k < spans.length; k++)
      if (spans[k]!.from < spans[k - 1]!.to) v('number_dials', `${n} dialled twice at once (${spans[k - 1]!.id}, ${spans[k]!.id})`);
  }
  return out;
}
