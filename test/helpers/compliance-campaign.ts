// End-to-end compliance campaigns (issue 33): a random campaign (an account with its windows and
// frequency cap, one or two batches of contacts with alternates, contact zones, windows, retries,
// expiry; do-not-call adds and opt-outs mid-run) is run through the REST API and the real worker on
// the simulator under the test clock, which the run moves in steps (to the next time a call waits
// for, or further). Then every dial recorded in the calls' history is checked against the oracle
// (compliance-oracle.ts) and the run's own record of what it did, never against what the service
// says it decided: violations come back as sentences.
import fc from 'fast-check';
import type { TestApp } from './app.ts';
import { typedInput } from './batch-requests.ts';

// GraphQL, the service's own API (the REST facade forwards to it): the create, the list and cancel.
const CREATE = 'mutation($input: CreateCallBatchInput!) { createCallBatch(input: $input) { batchId } }';
import { testWorker } from './dispatch.ts';
import { contactZoneFor, DST_CHANGES, phoneNumber, profilesArb, windowArb } from './compliance-arbitraries.ts';
import { describeWindow, oracleRules, oracleVerdict, overCap, type OracleProfile, type OracleWindow } from './compliance-oracle.ts';

/** fast-check parameters from the environment: COMPLIANCE_SEED and COMPLIANCE_PATH replay a failure. */
export function replayParameters(): { seed?: number; path?: string } {
  const seed = process.env.COMPLIANCE_SEED;
  const path = process.env.COMPLIANCE_PATH;
  return { ...(seed ? { seed: Number(seed) } : {}), ...(path ? { path } : {}) };
}

export interface CampaignContact {
  phone: string;
  alternate: string | null;
  timezone: string | null;
  /** The simulator's outcome per attempt (the last repeats). */
  sim: string;
}

export interface CampaignBatch {
  /** The step before which it is created (0: at the campaign's start). */
  atStep: number;
  contacts: CampaignContact[];
  window: OracleWindow | null;
  useAlternate: boolean;
  retry: { max_attempts: number; delay_seconds: number; on: string[] } | null;
  expiresAfterMinutes: number | null;
  /** The batch's own compliance profiles (GraphQL complianceProfiles), besides the account's. */
  profiles: OracleProfile[];
}

export interface Campaign {
  start: Date;
  /** The account's compliance profiles, set explicitly ([]: none) so the service default does not matter. */
  profiles: OracleProfile[];
  defaultWindow: OracleWindow | null;
  enforcedWindow: OracleWindow | null;
  cap: { maxCalls: number; periodSeconds: number } | null;
  batches: CampaignBatch[];
  /** Numbers put on the do-not-call list before a step's drain: an index into the campaign's numbers. */
  dncAdds: Array<{ atStep: number; pick: number }>;
  /** How the clock moves after each step: to the next time a call waits for (plus `ms` mod 10 min), or on by `ms`. */
  steps: Array<{ mode: 'next' | 'jump'; ms: number }>;
}

const SIM = ['completed', 'no_answer', 'busy', 'failed', 'voicemail', 'opt_out'] as const;
const simArb = fc
  .array(fc.constantFrom(...SIM, 'no_answer', 'completed'), { minLength: 1, maxLength: 3 })
  .map((a) => a.join(','));

/** Wide windows mostly (calls get placed), any window sometimes; none now and then (any hour). */
const batchWindow = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom<OracleWindow>({ start: '08:00', end: '21:00', timezone: 'recipient' }, { start: '09:00', end: '20:00', timezone: 'recipient' }, { start: '00:30', end: '23:30', timezone: 'recipient' }) },
  { weight: 2, arbitrary: windowArb },
  { weight: 1, arbitrary: fc.constant(null) },
);
/** Mostly absent: an account window narrows every batch, and most random ones never meet the batch's. */
const rarely = <T>(arb: fc.Arbitrary<T>) => fc.oneof({ weight: 5, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: arb });

/** A campaign over 2-8 numbers shared by its contacts, batches and list adds (so they meet). */
export const campaignArb: fc.Arbitrary<Campaign> = fc
  .uniqueArray(phoneNumber, { minLength: 2, maxLength: 8 })
  .chain((pool) => {
    const contact = fc
      .tuple(fc.nat(pool.length - 1), fc.option(fc.nat(pool.length - 1), { freq: 2 }), simArb)
      .chain(([p, alt, sim]) =>
        contactZoneFor(pool[p], 3).map((tz) => ({ phone: pool[p], alternate: alt === null || alt === p ? null : pool[alt], timezone: tz, sim })),
      );
    const batch = fc.record({
      atStep: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 6 }) }),
      contacts: fc.array(contact, { minLength: 1, maxLength: 8 }),
      window: batchWindow,
      useAlternate: fc.boolean(),
      retry: fc.option(
        fc.record({
          max_attempts: fc.integer({ min: 1, max: 4 }),
          delay_seconds: fc.integer({ min: 60, max: 4 * 3600 }),
          on: fc.subarray(['no_answer', 'busy', 'failed', 'voicemail'], { minLength: 1 }),
        }),
        { freq: 3 },
      ),
      expiresAfterMinutes: fc.option(fc.integer({ min: 30, max: 3 * 24 * 60 }), { freq: 2 }),
      profiles: fc.oneof({ weight: 3, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: profilesArb }),
    });
    return fc.record({
      profiles: profilesArb,
      start: fc.tuple(fc.constantFrom(...DST_CHANGES), fc.integer({ min: -36 * 60, max: 36 * 60 })).map(([t, m]) => new Date(t.getTime() + m * 60_000)),
      defaultWindow: rarely(windowArb),
      enforcedWindow: rarely(batchWindow.filter((w) => w !== null)),
      cap: fc.option(fc.record({ maxCalls: fc.integer({ min: 1, max: 3 }), periodSeconds: fc.constantFrom(3_600, 4 * 3_600, 86_400) }), { freq: 2 }),
      batches: fc.array(batch, { minLength: 1, maxLength: 2 }),
      dncAdds: fc.array(fc.record({ atStep: fc.integer({ min: 1, max: 8 }), pick: fc.nat(pool.length - 1) }), { maxLength: 2 }),
      steps: fc.array(
        fc.record({ mode: fc.constantFrom<'next' | 'jump'>('next', 'next', 'jump'), ms: fc.integer({ min: 60_000, max: 8 * 3_600_000 }) }),
        { minLength: 3, maxLength: 8 },
      ),
    });
  });

interface Dial {
  id: bigint;
  callId: string;
  batchId: string;
  externalId: string;
  number: string;
  at: Date;
}

export interface CampaignResult {
  violations: string[];
  dials: number;
  batches: number;
  /** Creates refused because every contact was (listed, no zone, window never opens). */
  rejectedBatches: number;
  steps: number;
}

const TERMINAL_CALL = new Set(['completed', 'failed', 'no_answer', 'busy', 'cancelled']);
const TERMINAL_WEBHOOK = new Set(['call.completed', 'call.failed', 'call.cancelled']);
const TERMINAL_BATCH = new Set(['completed', 'cancelled']);

const windowInput = (w: OracleWindow) => ({ start: w.start, end: w.end, timezone: w.timezone, ...(w.days ? { days: [...w.days] } : {}) });

/** Runs the campaign to its end (every batch finished or cancelled) and checks every dial it made. */
export async function runCampaign(t: TestApp, c: Campaign): Promise<CampaignResult> {
  const prisma = t.deps.db.prisma;
  t.clock.set(c.start);
  const a = await t.seedAccount({
    limits: { maxConcurrentCalls: 50 },
    outcomeKeys: ['interested', 'opt_out'],
    defaultCallingWindow: c.defaultWindow ? windowInput(c.defaultWindow) : null,
    enforcedCallingWindow: c.enforcedWindow ? windowInput(c.enforcedWindow) : null,
    frequencyCap: c.cap,
    complianceProfiles: c.profiles,
  });
  const keyed = await t.gql('mutation($id: ID!) { updateAgent(id: $id, input: { optOutOutcomeKey: "opt_out" }) { id } }', { id: a.agent.id }, a.apiKey);
  if (keyed.body.errors) throw new Error(`opt-out key: ${JSON.stringify(keyed.body.errors)}`);

  const numbers = [...new Set(c.batches.flatMap((b) => b.contacts.flatMap((k) => [k.phone, ...(k.alternate ? [k.alternate] : [])])))];
  const created: Array<{ id: string; spec: CampaignBatch; expiresAt: Date | null }> = [];
  const listed: Array<{ number: string; afterEventId: bigint }> = [];
  /** The largest call_events id when each step's drain ended. */
  const stepEnds: bigint[] = [];
  const maxEventId = async () => (await prisma.callEvent.aggregate({ _max: { id: true } }))._max.id ?? 0n;
  const violations: string[] = [];
  let rejected = 0;

  let step = 0;
  for (; step <= c.steps.length; step++) {
    for (const spec of c.batches.filter((b) => b.atStep === step)) {
      const now = t.clock.now();
      const expiresAt = spec.expiresAfterMinutes === null ? null : new Date(now.getTime() + spec.expiresAfterMinutes * 60_000);
      const res = await t.gql(CREATE, {
        input: typedInput(a, {
          contacts: spec.contacts.map((k, i) => ({
            contactId: `c${i + 1}`,
            phoneNumber: k.phone,
            metadata: { sim: k.sim, ...(k.alternate ? { alternate_phone: k.alternate } : {}) },
            ...(k.timezone ? { timezone: k.timezone } : {}),
          })),
          useAlternateNumber: spec.useAlternate,
          callbackUrl: 'https://hooks.example.com/calls',
          ...(spec.window ? { callingWindow: windowInput(spec.window) } : {}),
          ...(spec.retry ? { retry: { maxAttempts: spec.retry.max_attempts, delaySeconds: spec.retry.delay_seconds, on: spec.retry.on } } : {}),
          ...(expiresAt ? { expiresAt: expiresAt.toISOString() } : {}),
          ...(spec.profiles.length ? { complianceProfiles: spec.profiles.map((p) => p.toUpperCase()) } : {}),
        }),
      }, a.apiKey);
      const batchId = res.body.data?.createCallBatch?.batchId as string | undefined;
      if (batchId) created.push({ id: batchId, spec, expiresAt });
      // Every contact refused (listed, its window never opens, no zone): an error that says so.
      else if (JSON.stringify(res.body.errors ?? '').includes('All contacts are invalid')) rejected += 1;
      else violations.push(`create at step ${step} failed: ${JSON.stringify(res.body).slice(0, 500)}`);
    }
    for (const add of c.dncAdds.filter((d) => d.atStep === step)) {
      const number = numbers[add.pick % numbers.length];
      const res = await t.gql('mutation($n: [String!]!) { addSuppressions(phoneNumbers: $n) { added } }', { n: [number] }, a.apiKey);
      if (res.body.errors) violations.push(`do-not-call add ${number} failed: ${JSON.stringify(res.body.errors)}`);
      // The add has committed: any dial recorded after this one must not be to that number.
      listed.push({ number, afterEventId: await maxEventId() });
    }
    await testWorker(t.deps).drain();
    stepEnds.push(await maxEventId());

    const ids = created.map((b) => b.id);
    const open = await prisma.batch.count({ where: { id: { in: ids }, status: { notIn: [...TERMINAL_BATCH] } } });
    const moreToCreate = c.batches.some((b) => b.atStep > step);
    if (step === c.steps.length || (open === 0 && !moreToCreate)) break;
    const move = c.steps[step];
    const now = t.clock.now().getTime();
    let to = now + move.ms;
    if (move.mode === 'next') {
      const next = await prisma.call.aggregate({
        _min: { nextAttemptAt: true },
        where: { batchId: { in: ids }, status: { notIn: [...TERMINAL_CALL] }, nextAttemptAt: { gt: new Date(now) } },
      });
      if (next._min.nextAttemptAt) to = next._min.nextAttemptAt.getTime() + (move.ms % 600_000 < 200_000 ? 0 : move.ms % 600_000);
    }
    t.clock.set(new Date(to));
  }
  // Whatever is left is cancelled: a dialled call waiting for a retry then gets its terminal webhook.
  for (const b of created) {
    const batch = await prisma.batch.findUniqueOrThrow({ where: { id: b.id } });
    if (TERMINAL_BATCH.has(batch.status)) continue;
    const res = await t.gql('mutation($id: ID!) { cancelBatch(id: $id) { id } }', { id: b.id }, a.apiKey);
    if (res.body.errors) violations.push(`cancel ${b.id} failed: ${JSON.stringify(res.body.errors).slice(0, 300)}`);
  }
  await testWorker(t.deps).drain();

  violations.push(...(await checkCampaign(t, c, a.account.id, created, listed, stepEnds)));
  const dials = await dialsOf(t, created.map((b) => b.id));
  return { violations, dials: dials.length, batches: created.length, rejectedBatches: rejected, steps: step + 1 };
}

async function dialsOf(t: TestApp, batchIds: string[]): Promise<Dial[]> {
  const rows = await t.deps.db.prisma.$queryRaw<Array<{ id: bigint; call_id: string; batch_id: string; external_id: string; number: string; at: Date }>>`
    SELECT e.id, e.call_id, c.batch_id, c.external_id, e.detail->>'number' AS number, e.at
      FROM call_events e JOIN calls c ON c.id = e.call_id
     WHERE c.batch_id = ANY(${batchIds}::text[]) AND e.detail->>'event' = 'dial'
     ORDER BY e.id`;
  return rows.map((r) => ({ id: r.id, callId: r.call_id, batchId: r.batch_id, externalId: r.external_id, number: r.number, at: r.at }));
}

async function checkCampaign(
  t: TestApp,
  c: Campaign,
  accountId: string,
  created: Array<{ id: string; spec: CampaignBatch; expiresAt: Date | null }>,
  listed: Array<{ number: string; afterEventId: bigint }>,
  stepEnds: bigint[],
): Promise<string[]> {
  const prisma = t.deps.db.prisma;
  const out: string[] = [];
  const ids = created.map((b) => b.id);
  const dials = await dialsOf(t, ids);
  const stepOf = (id: bigint) => stepEnds.findIndex((end) => id <= end);
  const byBatch = new Map(created.map((b) => [b.id, b]));
  const at = (d: Dial) => `${d.number} at ${d.at.toISOString()} (call ${d.callId}, step ${stepOf(d.id)})`;

  for (const d of dials) {
    const b = byBatch.get(d.batchId)!;
    const contact = b.spec.contacts[Number(d.externalId.slice(1)) - 1];
    // 1. Hours: every window in force, open by the wall clock in every zone that applies.
    const windows = [b.spec.window ?? c.defaultWindow, c.enforcedWindow].filter((w): w is OracleWindow => w !== null);
    if (d.number !== contact.phone && !(b.spec.useAlternate && d.number === contact.alternate)) out.push(`dialled a number not the contact's: ${at(d)}`);
    const profiles = [...new Set([...c.profiles, ...b.spec.profiles])];
    const verdict = oracleVerdict(d.number, contact.timezone, windows, d.at, profiles);
    if (!verdict.open) out.push(`dial outside the hours: ${at(d)}, contact zone ${contact.timezone ?? '-'}: ${verdict.why} [windows ${windows.map(describeWindow).join(' + ')}]`);
    // 2. Expiry: no dial at or after expires_at.
    if (b.expiresAt && d.at.getTime() >= b.expiresAt.getTime()) out.push(`dial after expires_at ${b.expiresAt.toISOString()}: ${at(d)}`);
    // 3. The do-not-call list: no dial to a number after its add committed.
    for (const l of listed) if (d.number === l.number && d.id > l.afterEventId) out.push(`dial to a listed number (listed before event ${l.afterEventId}): ${at(d)}`);
  }
  // 4. Opt-outs: the number an opt-out listed is not dialled in a later step than the opting call's.
  const optOuts = await prisma.$queryRaw<Array<{ phone_number: string; source: string }>>`
    SELECT phone_number, source FROM suppressions WHERE account_id = ${accountId} AND source LIKE 'call:%'`;
  for (const o of optOuts) {
    const callId = o.source.slice('call:'.length);
    const optingStep = Math.max(...dials.filter((d) => d.callId === callId).map((d) => stepOf(d.id)));
    for (const d of dials) if (d.number === o.phone_number && stepOf(d.id) > optingStep) out.push(`dial to an opted-out number (opted out by call ${callId} in step ${optingStep}): ${at(d)}`);
  }
  // 5. The frequency cap, over the account's dials (all its batches).
  if (c.cap) for (const { dial, inPeriod } of overCap(dials, c.cap)) out.push(`dial over the cap ${c.cap.maxCalls}/${c.cap.periodSeconds}s (${inPeriod} in the period): ${at(dial)}`);
  // 5b. A state's calls-per-24-hours limit (Florida, Oklahoma, Maryland: 3) for a dial under us_states,
  // counting every dial of the account to the number.
  for (const d of dials) {
    const b = byBatch.get(d.batchId)!;
    const limit = oracleRules(d.number, [...c.profiles, ...b.spec.profiles]).find((r) => r.perDay)?.perDay;
    if (limit === undefined) continue;
    const t0 = d.at.getTime();
    // Dials recorded up to this one (history ids order dials at one instant of the test clock).
    const inDay = dials.filter((o) => o.number === d.number && o.at.getTime() > t0 - 86_400_000 && o.id <= d.id).length;
    if (inDay > limit) out.push(`dial over the state limit of ${limit} in 24 h (${inDay}): ${at(d)}`);
  }
  // 6. Exactly one terminal webhook per dialled call.
  const deliveries = await prisma.webhookDelivery.findMany({ where: { batchId: { in: ids } }, select: { payload: true } });
  const terminal = new Map<string, string[]>();
  for (const { payload } of deliveries) {
    const p = payload as { type: string; data: { call_id?: string } };
    if (p.data.call_id && TERMINAL_WEBHOOK.has(p.type)) terminal.set(p.data.call_id, [...(terminal.get(p.data.call_id) ?? []), p.type]);
  }
  for (const callId of new Set(dials.map((d) => d.callId))) {
    const got = terminal.get(callId) ?? [];
    if (got.length !== 1) out.push(`dialled call ${callId} has ${got.length} terminal webhooks (${got.join(', ') || 'none'})`);
  }
  return out;
}
