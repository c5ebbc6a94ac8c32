// A batch with calls written straight to the database, so webhook tests can make state changes
// themselves (inside a transaction, with the outbox) without the dispatch worker.
import type { AppDeps } from '../../src/deps.ts';
import { newId } from '../../src/domain/ids.ts';
import type { Batch, Call } from '../../src/generated/prisma/client.ts';
import type { SeededAccount } from './app.ts';

export async function insertWebhookBatch(
  deps: AppDeps,
  seeded: SeededAccount,
  opts: { callbackUrl: string | null; calls?: number },
): Promise<{ batch: Batch; calls: Call[] }> {
  const now = deps.clock.now();
  const n = opts.calls ?? 2;
  const batch = await deps.db.prisma.batch.create({
    data: {
      id: newId('batch'),
      accountId: seeded.account.id,
      agentId: seeded.agent.id,
      promptVersionId: seeded.version.id,
      didNumberId: seeded.did.id,
      status: 'queued',
      startMode: 'immediate',
      scheduledAt: now,
      timezone: 'Europe/Berlin',
      concurrency: 2,
      voice: 'verse',
      interruption: true,
      useAlternateNumber: false,
      recordingEnabled: true,
      maxDurationSeconds: 300,
      deduplicateByPhone: false,
      callbackUrl: opts.callbackUrl,
      totalContacts: n,
      acceptedContacts: n,
      rejectedContacts: 0,
      queued: n,
      createdAt: now,
    },
  });
  const calls: Call[] = [];
  for (let i = 0; i < n; i++) {
    calls.push(
      await deps.db.prisma.call.create({
        data: {
          id: newId('call'),
          accountId: seeded.account.id,
          batchId: batch.id,
          agentId: seeded.agent.id,
          promptVersionId: seeded.version.id,
          seq: i + 1,
          externalId: `ext-${i + 1}`,
          phoneNumber: `+1415555010${i}`,
          status: 'queued',
          createdAt: now,
        },
      }),
    );
  }
  return { batch, calls };
}
