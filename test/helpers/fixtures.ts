// Batches and calls written straight to the database, for tests of the read side (and anyone who
// needs a batch without going through creation or the worker). Counters always agree with the
// calls' statuses, as the worker keeps them.
import type { AppDeps } from '../../src/deps.ts';
import { initialStatusAfterCreate, type BatchStatus, type StartMode } from '../../src/domain/batch-state.ts';
import { counterBucket, counterDelta, type CallStatus, type CounterBucket } from '../../src/domain/call-state.ts';
import { createAgent, createPromptVersion } from '../../src/services/accounts/catalog.ts';
import { newId, newIds } from '../../src/domain/ids.ts';
import type { Batch, Call, Prisma } from '../../src/generated/prisma/client.ts';
import type { SeededAccount } from './app.ts';

/**
 * Keys of a call record (list-calls, list-call-records, batch results items): the spec's table in
 * its order, then the fields added beside it (attempts, next_attempt_at, timezone, retry_reason, primary_phone_number, consent).
 */
export const CALL_RECORD_KEYS = [
  'call_id',
  'batch_id',
  'contact_id',
  'external_id',
  'phone_number',
  'agent_id',
  'agent_name',
  'version_id',
  'version_name',
  'voice',
  'status',
  'call_status',
  'transcript_status',
  'duration_seconds',
  'answer_duration_seconds',
  'timestamp',
  'created_at',
  'completed_at',
  'hangup_by',
  'disconnect_reason',
  'summary',
  'outcomes',
  'recording_available',
  'recording_url',
  'llm_transcript',
  'attempts',
  'next_attempt_at',
  'timezone',
  'retry_reason',
  'primary_phone_number',
  'consent',
  'voicemail_left',
  'from_number',
] as const;

/**
 * Call and batch columns a test may set. What a create guarantees is the fixture's: a call's
 * account, batch, agent and prompt version (see InsertBatchOptions.agent), seq (1..accepted) and
 * created_at are its batch's; call records are read through batches (call-record-ranges.ts).
 */
export type CallFields = Partial<
  Omit<Prisma.CallCreateManyInput, 'id' | 'accountId' | 'batchId' | 'seq' | 'agentId' | 'promptVersionId' | 'createdAt'>
>;
export type BatchFields = Partial<Omit<Prisma.BatchCreateManyInput, 'id' | 'accountId' | 'acceptedContacts' | 'createdAt'>>;

export interface InsertBatchOptions {
  contacts: number;
  /** Stored batch status; default: what creation leaves for the start mode. */
  status?: BatchStatus;
  startMode?: StartMode;
  /** created_at of the batch and, unless overridden, of its calls. Default: deps.clock.now(). */
  createdAt?: Date;
  /** Per-call columns; `i` is the 0-based submission index (seq = i + 1). */
  callOverrides?: (i: number) => CallFields;
  /** Any other batch column (voice, timezone, scheduledAt, rejectedContacts, …). */
  batch?: BatchFields;
  /** Agent and prompt version of the batch and all its calls; default: the seeded account's. */
  agent?: Pick<SeededAccount, 'agent' | 'version'>;
}

export interface InsertedBatch {
  batch: Batch;
  /** In submission order. */
  calls: Call[];
}

const STARTED: readonly BatchStatus[] = ['dispatching', 'running', 'completed'];

export async function insertBatch(deps: AppDeps, seeded: SeededAccount, opts: InsertBatchOptions): Promise<InsertedBatch> {
  const startMode = opts.startMode ?? 'immediate';
  const status = opts.status ?? initialStatusAfterCreate(startMode);
  const createdAt = opts.createdAt ?? deps.clock.now();
  const batchId = newId('batch');
  const callIds = newIds('call', opts.contacts);
  const { agent, version } = opts.agent ?? seeded;

  const calls: Prisma.CallCreateManyInput[] = callIds.map((id, i) => ({
    externalId: `contact-${i + 1}`,
    name: `Contact ${i + 1}`,
    phoneNumber: `+1415555${String(1000 + (i % 9000)).padStart(4, '0')}`,
    status: 'pending',
    createdAt,
    ...opts.callOverrides?.(i),
    id,
    accountId: seeded.account.id,
    agentId: agent.id,
    promptVersionId: version.id,
    batchId,
    seq: i + 1,
  }));

  const counters: Record<CounterBucket, number> = { queued: 0, in_progress: 0, completed: 0, failed: 0, cancelled: 0 };
  for (const c of calls) counters[counterBucket(c.status as CallStatus)] += 1;

  const rejected = opts.batch?.rejectedContacts ?? 0;
  await deps.db.prisma.$transaction([
    deps.db.prisma.batch.create({
      data: {
        accountId: seeded.account.id,
        agentId: agent.id,
        promptVersionId: version.id,
        didNumberId: seeded.did.id,
        status,
        startMode,
        scheduledAt: createdAt,
        timezone: 'America/New_York',
        concurrency: 5,
        voice: agent.voice,
        interruption: true,
        useAlternateNumber: false,
        recordingEnabled: true,
        maxDurationSeconds: 600,
        deduplicateByPhone: false,
        totalContacts: opts.contacts + rejected,
        acceptedContacts: opts.contacts,
        rejectedContacts: rejected,
        createdAt,
        startedAt: STARTED.includes(status) ? createdAt : null,
        completedAt: status === 'completed' || status === 'cancelled' ? new Date(createdAt.getTime() + 3_600_000) : null,
        ...opts.batch,
        id: batchId,
        queued: counters.queued,
        inProgress: counters.in_progress,
        completed: counters.completed,
        failed: counters.failed,
        cancelled: counters.cancelled,
      },
    }),
    deps.db.prisma.call.createMany({ data: calls }),
  ]);

  const [batch, rows] = await Promise.all([
    deps.db.prisma.batch.findUniqueOrThrow({ where: { id: batchId } }),
    deps.db.prisma.call.findMany({ where: { batchId }, orderBy: { seq: 'asc' } }),
  ]);
  return { batch, calls: rows };
}

/**
 * Columns of a call that reached `status`, shaped like the worker's output: terminal calls have
 * timings, answered ones a transcript, summary, outcomes and a recording.
 */
export function callInState(
  status: CallStatus,
  i: number,
  at: Date,
  outcomes: Record<string, string> = { interested: i % 2 ? 'no' : 'yes' },
): CallFields {
  const placed = new Date(at.getTime() + i * 1000);
  const duration = 20 + (i % 40);
  const ended = new Date(placed.getTime() + duration * 1000);
  switch (status) {
    case 'pending':
    case 'queued':
    case 'cancelled':
      return { status };
    case 'ringing':
    case 'answered':
    case 'in_progress':
      return { status, timestamp: placed, attempts: 1 };
    case 'completed':
      return {
        status,
        timestamp: placed,
        completedAt: ended,
        durationSeconds: duration,
        answerDurationSeconds: duration - 4,
        hangupBy: i % 3 === 0 ? 'user' : 'agent',
        disconnectReason: i % 3 === 0 ? 'normal' : 'agent_hangup',
        transcriptStatus: 'ready',
        summary: `Spoke with contact ${i + 1}; ${outcomes.interested === 'yes' ? 'wants a demo' : 'not interested'}.`,
        outcomes,
        recordingAvailable: true,
        llmTranscript: `Agent: Hello, is this contact ${i + 1}?\nUser: Yes.\nAgent: Would you like a demo?\nUser: ${outcomes.interested === 'yes' ? 'Sure.' : 'No thanks.'}`,
        attempts: 1,
      };
    case 'failed':
    case 'no_answer':
    case 'busy':
      return {
        status,
        timestamp: placed,
        completedAt: new Date(placed.getTime() + 30_000),
        durationSeconds: 0,
        hangupBy: 'system',
        disconnectReason: status === 'failed' ? 'dial_failed' : status,
        recordingAvailable: false,
        attempts: 1,
      };
  }
}

/**
 * Moves one call to `to` the way the worker does: the call row and the batch counters change in one
 * transaction, so no reader ever sees them disagree.
 */
export async function moveCall(deps: AppDeps, callId: string, to: CallStatus, fields: CallFields = {}): Promise<void> {
  await deps.db.prisma.$transaction(async (tx) => {
    const [row] = await tx.$queryRaw<{ status: CallStatus; batch_id: string }[]>`
      SELECT status, batch_id FROM calls WHERE id = ${callId} FOR UPDATE`;
    if (!row) throw new Error(`no call ${callId}`);
    await tx.call.update({ where: { id: callId }, data: { ...fields, status: to } });
    const delta = counterDelta(row.status, to);
    const data: Prisma.BatchUpdateInput = {};
    for (const [bucket, n] of Object.entries(delta) as [CounterBucket, number][]) {
      data[BUCKET_COLUMN[bucket]] = { increment: n };
    }
    if (Object.keys(data).length) await tx.batch.update({ where: { id: row.batch_id }, data });
  });
}

const BUCKET_COLUMN: Record<CounterBucket, 'queued' | 'inProgress' | 'completed' | 'failed' | 'cancelled'> = {
  queued: 'queued',
  in_progress: 'inProgress',
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
};

/** A second agent (with one prompt version) on a seeded account. */
export async function addAgent(
  deps: AppDeps,
  seeded: SeededAccount,
  name: string,
  voice = 'verse',
): Promise<Pick<SeededAccount, 'agent' | 'version'>> {
  const agent = await createAgent(deps.db, seeded.account, { name, voice, outcomeKeys: ['interested'] });
  const version = await createPromptVersion(deps.db, seeded.account, { agentId: agent.id, name: 'v1', prompt: `You are ${name}.` });
  return { agent, version };
}
