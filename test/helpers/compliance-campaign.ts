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
import { registryOf, testWorker } from './dispatch.ts';
import { simulatorFromConfig } from '../../src/dispatch/voice/simulator-module.ts';
import type { VoiceProvider } from '../../src/dispatch/voice/provider.ts';
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
const simArb = fc.array(fc.constantFrom(...SIM, 'no_answer', 'completed'), { minLength: 1, maxLength: 3 }).map((a) => a.join(','));

/** Wide windows mostly (calls get placed), any window sometimes; none now and then (any hour). */
const batchWindow = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.constantFrom<OracleWindow>(
      { start: '08:00', end: '21:00', timezone: 'recipient' },
      { start: '09:00', end: '20:00', timezone: 'recipient' },
      { start: '00:30', end: '23:30', timezone: 'recipient' },
    ),
  },
  { weight: 2, arbitrary: windowArb },
  { weight: 1, arbitrary: fc.constant(null) },
);
/** Mostly absent: an account window narrows every batch, and most random ones never meet the batch's. */
const rarely = <T>(arb: fc.Arbitrary<T>) => fc.oneof({ weight: 5, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: arb });

/** A campaign over 2-8 numbers shared by its contacts, batches and list adds (so they meet). */
export const campaignArb: fc.Arbitrary<Campaign> = fc.uniqueArray(phoneNumber, { minLength: 2, maxLength: 8 }).chain((pool) => {
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
    profiles: fc.oneof({ weight: 3, arbitrary: fc.constant<OracleProfile[]>([]) }, { weight: 1, arbitrary: profilesArb }),
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

/** One placeCall the provider received: the dial log, the checker's ground truth. */
interface Dial {
  /** Position in the log: dials in the order they reached the provider. */
  seq: number;
  callId: string;
  batchId: string;
  externalId: string;
  number: string;
  attempt: number;
  at: Date;
}

/** The app's simulator (simulatorFromConfig: calls end at once, on the test clock) with every placeCall logged. */
function loggingSimulator(t: TestApp, log: Dial[]): VoiceProvider {
  const inner = simulatorFromConfig(t.deps);
  return {
    ...inner,
    async placeCall(req) {
      log.push({
        seq: log.length + 1,
        callId: req.callId,
        batchId: req.batchId,
        externalId: req.contact.externalId,
        number: req.to,
        attempt: req.attempt,
        at: t.clock.now(),
      });
      return inner.placeCall(req);
    },
  };
}

export interface CampaignResult {
  violations: string[];
  dials: number;
  batches: number;
  /** What the run exercised: opt-out answers, do-not-call adds, dials under a profile rule or a cap, retries and alternates dialled. */
  exercised: { optOuts: number; listed: number; ruled: number; capped: number; retries: number; alternates: number };
  /** Creates refused because every contact was (listed, no zone, window never opens): their errors. */
  rejectedBatches: string[];
  steps: number;
}

const TERMINAL_CALL = new Set(['completed', 'failed', 'no_answer', 'busy', 'cancelled']);
const TERMINAL_WEBHOOK = new Set(['call.completed', 'call.failed', 'call.cancelled']);
const TERMINAL_BATCH = new Set(['completed', 'cancelled']);

const windowInput = (w: OracleWindow) => ({ start: w.start, end: w.end, timezone: w.timezone, ...(w.days ? { days: [...w.days] } : {}) });

/** Runs the campaign to its end (every batch finished or cancelled) and checks every dial it made. */
export async function runCampaign(t: TestApp, c: Campaign): Promise<CampaignResult> {
  const prisma = t.deps.db.prisma;
  // Campaigns share the app and its worker claims every account's calls: one that failed half way
  // (shrinking replays many) must not leave calls that another campaign's clock, hours or days
  // earlier, then dials.
  await prisma.batch.updateMany({ where: { status: { notIn: [...TERMINAL_BATCH] } }, data: { status: 'paused' } });
  t.clock.set(c.start);
  const a = await t.seedAccount({
    limits: { maxConcurrentCalls: 50 },
    outcomeKeys: ['interested', 'opt_out'],
    defaultCallingWindow: c.defaultWindow ? windowInput(c.defaultWindow) : null,
    enforcedCallingWindow: c.enforcedWindow ? windowInput(c.enforcedWindow) : null,
    frequencyCap: c.cap,
    complianceProfiles: c.profiles,
  });
  const keyed = await t.gql(
    'mutation($id: ID!) { updateAgent(id: $id, input: { optOutOutcomeKey: "opt_out" }) { id } }',
    { id: a.agent.id },
    a.apiKey,
  );
  if (keyed.body.errors) throw new Error(`opt-out key: ${JSON.stringify(keyed.body.errors)}`);

  const numbers = [...new Set(c.batches.flatMap((b) => b.contacts.flatMap((k) => [k.phone, ...(k.alternate ? [k.alternate] : [])])))];
  const created: Array<{ id: string; spec: CampaignBatch; expiresAt: Date | null }> = [];
  const listed: Array<{ number: string; afterSeq: number }> = [];
  const log: Dial[] = [];
  const providers = registryOf(loggingSimulator(t, log));
  /** The dial log's length when each step's drain ended. */
  const stepEnds: number[] = [];
  const violations: string[] = [];
  const rejected: string[] = [];

  let step = 0;
  for (; step <= c.steps.length; step++) {
    for (const spec of c.batches.filter((b) => b.atStep === step)) {
      const now = t.clock.now();
      const expiresAt = spec.expiresAfterMinutes === null ? null : new Date(now.getTime() + spec.expiresAfterMinutes * 60_000);
      const res = await t.gql(
        CREATE,
        {
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
            ...(spec.profiles.length ? { complianceProfiles: spec.profiles } : {}),
          }),
        },
        a.apiKey,
      );
      const batchId = res.body.data?.createCallBatch?.batchId as string | undefined;
      if (batchId) created.push({ id: batchId, spec, expiresAt });
      // Every contact refused (listed, its window never opens, no zone): an error that says so.
      else if (JSON.stringify(res.body.errors ?? '').includes('All contacts are invalid'))
        rejected.push(JSON.stringify(res.body.errors).slice(0, 600));
      else violations.push(`create at step ${step} failed: ${JSON.stringify(res.body).slice(0, 500)}`);
    }
    for (const add of c.dncAdds.filter((d) => d.atStep === step)) {
      const number = numbers[add.pick % numbers.length];
      const res = await t.gql('mutation($n: [String!]!) { addSuppressions(phoneNumbers: $n) { added } }', { n: [number] }, a.apiKey);
      if (res.body.errors) violations.push(`do-not-call add ${number} failed: ${JSON.stringify(res.body.errors)}`);
      // The add has committed: any dial placed after this one must not be to that number.
      listed.push({ number, afterSeq: log.length });
    }
    await testWorker(t.deps, { providers }).drain();
    stepEnds.push(log.length);

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
  await testWorker(t.deps, { providers }).drain();

  violations.push(...(await checkCampaign(t, c, created, listed, log, stepEnds)));
  const byId = new Map(created.map((b) => [b.id, b.spec]));
  const contactOf = (d: Dial) => byId.get(d.batchId)?.contacts[Number(d.externalId.slice(1)) - 1];
  const exercised = {
    optOuts: log.filter(
      (d) =>
        contactOf(d)
          ?.sim.split(',')
          .at(Math.min(d.attempt, contactOf(d)!.sim.split(',').length) - 1) === 'opt_out',
    ).length,
    listed: listed.length,
    ruled: log.filter((d) => oracleRules(d.number, [...c.profiles, ...(byId.get(d.batchId)?.profiles ?? [])]).length > 0).length,
    capped: c.cap ? log.length : 0,
    retries: log.filter((d) => d.attempt > 1 && d.number === contactOf(d)?.phone).length,
    alternates: log.filter((d) => d.number !== contactOf(d)?.phone).length,
  };
  return { violations, dials: log.length, exercised, batches: created.length, rejectedBatches: rejected, steps: step + 1 };
}

async function checkCampaign(
  t: TestApp,
  c: Campaign,
  created: Array<{ id: string; spec: CampaignBatch; expiresAt: Date | null }>,
  listed: Array<{ number: string; afterSeq: number }>,
  dials: readonly Dial[],
  stepEnds: number[],
): Promise<string[]> {
  const prisma = t.deps.db.prisma;
  const out: string[] = [];
  const ids = created.map((b) => b.id);
  const stepOf = (seq: number) => stepEnds.findIndex((end) => seq <= end);
  const byBatch = new Map(created.map((b) => [b.id, b]));
  const at = (d: Dial) => `${d.number} at ${d.at.toISOString()} (call ${d.callId}, attempt ${d.attempt}, step ${stepOf(d.seq)})`;

  for (const d of dials) {
    const b = byBatch.get(d.batchId);
    if (!b) {
      out.push(`dialled a call of a batch this campaign did not create: ${at(d)}`);
      continue;
    }
    const contact = b.spec.contacts[Number(d.externalId.slice(1)) - 1];
    // 1. Hours: every window in force, open by the wall clock in every zone that applies.
    const windows = [b.spec.window ?? c.defaultWindow, c.enforcedWindow].filter((w): w is OracleWindow => w !== null);
    if (d.number !== contact.phone && !(b.spec.useAlternate && d.number === contact.alternate))
      out.push(`dialled a number not the contact's: ${at(d)}`);
    const profiles = [...new Set([...c.profiles, ...b.spec.profiles])];
    const verdict = oracleVerdict(d.number, contact.timezone, windows, d.at, profiles);
    if (!verdict.open)
      out.push(
        `dial outside the hours: ${at(d)}, contact zone ${contact.timezone ?? '-'}: ${verdict.why} [windows ${windows.map(describeWindow).join(' + ')}]`,
      );
    // 2. Expiry: no dial at or after expires_at.
    if (b.expiresAt && d.at.getTime() >= b.expiresAt.getTime()) out.push(`dial after expires_at ${b.expiresAt.toISOString()}: ${at(d)}`);
    // 3. The do-not-call list: no dial to a number after its add committed.
    for (const l of listed)
      if (d.number === l.number && d.seq > l.afterSeq) out.push(`dial to a listed number (listed after dial ${l.afterSeq}): ${at(d)}`);
  }
  // 4. Opt-outs, from the simulator's plan: a dial whose attempt the contact's `sim` answers
  // opt_out is the person asking not to be called; from the next step on (the opt-out commits with
  // the call's result, within its step), no number of that contact (primary, alternate) is dialled,
  // in any batch of the account.
  const simOf = (sim: string, attempt: number) => {
    const plan = sim.split(',');
    return plan[Math.min(Math.max(attempt, 1), plan.length) - 1];
  };
  for (const o of dials) {
    const b = byBatch.get(o.batchId);
    const contact = b?.spec.contacts[Number(o.externalId.slice(1)) - 1];
    if (!contact || simOf(contact.sim, o.attempt) !== 'opt_out') continue;
    const numbers = [contact.phone, ...(contact.alternate ? [contact.alternate] : [])];
    for (const d of dials) {
      if (numbers.includes(d.number) && stepOf(d.seq) > stepOf(o.seq))
        out.push(`dial to an opted-out person (call ${o.callId} opted out in step ${stepOf(o.seq)}): ${at(d)}`);
    }
  }
  // 5. The frequency cap, over the account's dials (all its batches).
  if (c.cap)
    for (const { dial, inPeriod } of overCap(dials, c.cap))
      out.push(`dial over the cap ${c.cap.maxCalls}/${c.cap.periodSeconds}s (${inPeriod} in the period): ${at(dial)}`);
  // 5b. A state's calls-per-24-hours limit (Florida, Oklahoma, Maryland: 3) for a dial under us_states,
  // counting every dial of the account to the number.
  for (const d of dials) {
    const b = byBatch.get(d.batchId);
    if (!b) continue;
    const limit = oracleRules(d.number, [...c.profiles, ...b.spec.profiles]).find((r) => r.perDay)?.perDay;
    if (limit === undefined) continue;
    const t0 = d.at.getTime();
    // Dials placed up to this one (the log orders dials at one instant of the test clock).
    const inDay = dials.filter((o) => o.number === d.number && o.at.getTime() > t0 - 86_400_000 && o.seq <= d.seq).length;
    if (inDay > limit) out.push(`dial over the state limit of ${limit} in 24 h (${inDay}): ${at(d)}`);
  }
  // 6. The calls' history records every dial placed, and only those: a `dial` entry per placeCall
  // (a `dial_withheld` after one takes it back: the claim's dial stopped before the provider).
  const history = await prisma.$queryRaw<Array<{ call_id: string; dials: number; withheld: number }>>`
    SELECT e.call_id, count(*) FILTER (WHERE e.detail->>'event' = 'dial')::int AS dials,
           count(*) FILTER (WHERE e.detail->>'event' = 'dial_withheld')::int AS withheld
      FROM call_events e JOIN calls c ON c.id = e.call_id
     WHERE c.batch_id = ANY(${ids}::text[]) GROUP BY e.call_id`;
  const placed = new Map<string, number>();
  for (const d of dials) placed.set(d.callId, (placed.get(d.callId) ?? 0) + 1);
  for (const h of history) {
    const n = placed.get(h.call_id) ?? 0;
    if (h.dials - h.withheld !== n)
      out.push(`call ${h.call_id}: history records ${h.dials} dials (${h.withheld} withheld), the provider received ${n}`);
  }
  // 7. Exactly one terminal webhook per dialled call.
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
