// The example client: lists the account's recent batches, creates a small manual batch, starts
// it and prints its progress until it ends.
//   API_KEY=sk_… [GRAPHQL_URL=http://127.0.0.1:3000/graphql] npm run example:client
import { execute, subscribe, type ClientOptions } from './client.ts';
import { AccountAndAgents, BatchProgress, CreateManualBatch, RecentBatches, StartBatch } from './documents.ts';

const FINISHED = new Set(['completed', 'cancelled']);

function options(): ClientOptions {
  const apiKey = process.env.API_KEY;
  if (!apiKey) throw new Error('Set API_KEY to an account API key (sk_…)');
  return { url: process.env.GRAPHQL_URL ?? 'http://127.0.0.1:3000/graphql', apiKey };
}

async function createBatch(client: ClientOptions): Promise<string> {
  const { me, agents } = await execute(client, AccountAndAgents, {});
  const agent = agents.find((a) => a.promptVersions.length > 0);
  if (!agent) throw new Error(`Account ${me.name} has no agent with a prompt version`);
  console.log(`account: ${me.name}; agent: ${agent.name}`);

  const recent = await execute(client, RecentBatches, { limit: 5 });
  console.log(`batches: ${recent.batches.pagination.total}`);
  for (const b of recent.batches.items) console.log(`  ${b.id} ${b.status} ${b.completed + b.failed}/${b.acceptedContacts}`);

  const { createCallBatch: created } = await execute(client, CreateManualBatch, {
    input: {
      agentId: agent.id,
      versionId: agent.promptVersions[0].id,
      startMode: 'manual',
      concurrency: 2,
      interruption: true,
      useAlternateNumber: false,
      scheduleDate: new Date().toISOString().slice(0, 10),
      scheduleTime: '09:00',
      scheduleTimezone: 'UTC',
      // With the simulator the last digit picks the outcome: 3–9 answered, 0 no answer, 1 busy.
      contacts: ['+14155550133', '+14155550144', '+14155550155', '+14155550160', '+14155550171'].map((phoneNumber, i) => ({
        contactId: `example-${i + 1}`,
        phoneNumber,
      })),
    },
  });
  console.log(`created: ${created.batchId} ${created.status}, ${created.acceptedContacts} contacts`);
  return created.batchId;
}

async function main() {
  const client = options();
  const batchId = await createBatch(client);
  // The first value is the batch as it is now (paused: a manual batch waits); start it then.
  for await (const { batchProgress: p } of subscribe(client, BatchProgress, { batchId })) {
    console.log(`progress: ${p.status} queued=${p.queued} inProgress=${p.inProgress} completed=${p.completed} failed=${p.failed}`);
    if (p.status === 'paused') {
      const { startBatch } = await execute(client, StartBatch, { id: batchId });
      console.log(`started: ${startBatch.status}`);
    }
    if (FINISHED.has(p.status)) break;
  }
  console.log(`done: ${batchId}`);
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exitCode = 1;
});
