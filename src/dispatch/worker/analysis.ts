// Analysis of ended, answered calls: transcript_status processing, then ready (summary and
// outcomes) or failed. A provider that analyses its own calls (Retell) is waited for; otherwise
// the local analyser reads the transcript, in groups of calls, a few groups at a time.
import type { CallWrite } from '../../services/calls/call-transitions.ts';
import { transcriptWrite } from '../store/call-writes.ts';
import { takeOverStaleAnalysis } from '../store/lease-recovery.ts';
import type { ProviderAnalysis } from '../voice/provider.ts';
import { callRef, enqueueWrite } from './ledger.ts';
import { detectsOptOut } from '../../domain/opt-out.ts';
import { optOutKeysOf } from './opt-out-keys.ts';
import { knownProvider, loadBatchSettings } from './providers.ts';
import type { AnalysisJob, WorkerState } from './state.ts';

const ANALYSIS_GROUP = 500;
const ANALYSIS_PARALLEL = 3;

/** The call's analysis: the provider's own when it makes one, else the local analyser's. */
export function analyseCall(s: WorkerState, job: AnalysisJob): void {
  s.book.analysing.add(job.callId);
  if (job.providerAnalysis) {
    void analyseWithProvider(s, job, job.providerAnalysis);
    return;
  }
  s.book.analysisQueue.push(job);
  startAnalysisGroups(s);
}

const processingWrite = (s: WorkerState, j: AnalysisJob) =>
  transcriptWrite(callRef(j), s.settings.id, j.status, { transcriptStatus: 'processing', recording: j.recording });

/**
 * Waits for the provider's analysis (it may take minutes) outside the analysis groups, so local
 * analyses never queue behind it. processing is written first, ready/failed once it is known.
 */
async function analyseWithProvider(s: WorkerState, j: AnalysisJob, by: NonNullable<AnalysisJob['providerAnalysis']>): Promise<void> {
  s.book.providerAnalysing.add(j.callId);
  try {
    const started = await enqueueWrite(s, processingWrite(s, j), j.callbackUrl);
    if (!started) return;
    let a: ProviderAnalysis | null;
    try {
      a = await by.provider.analyse!({
        accountId: j.accountId,
        providerCallId: by.providerCallId,
        outcomeKeys: j.outcomeKeys,
        wantRecording: j.recordingEnabled && !j.recording,
      });
    } catch (err) {
      // Provider closed (shutdown): the lease lapses and another worker takes the analysis over.
      s.log.warn({ err, callId: j.callId }, 'provider analysis interrupted; left to lease recovery');
      return;
    }
    const optOutRule = a ? (await optOutKeysOf(s, [j]))(j) : null;
    const write = a
      ? transcriptWrite(callRef(j), s.settings.id, j.status, {
          transcriptStatus: 'ready',
          ...(a.summary !== null ? { summary: a.summary } : {}),
          outcomes: a.outcomes,
          ...(a.recording ? { recording: a.recording } : {}),
          optOut: optOutRule !== null && detectsOptOut(optOutRule, a.outcomes, j.transcript),
        })
      : transcriptWrite(callRef(j), s.settings.id, j.status, { transcriptStatus: 'failed' });
    if (!a) s.log.warn({ callId: j.callId, providerCallId: by.providerCallId }, 'provider has no analysis for the call');
    await enqueueWrite(s, write, j.callbackUrl);
  } catch (err) {
    s.log.error({ err, callId: j.callId }, 'provider analysis failed');
  } finally {
    s.book.analysing.delete(j.callId);
    s.book.providerAnalysing.delete(j.callId);
  }
}

/**
 * Runs analysis groups, a few at a time, so analysis keeps pace with calls ending. A group starts
 * after the claim round under way (the one the same call endings triggered): refilling the freed
 * slots comes first, the transcript can wait a few milliseconds.
 */
function startAnalysisGroups(s: WorkerState): void {
  while (s.book.analysisGroupsRunning < ANALYSIS_PARALLEL && s.book.analysisQueue.length > 0) {
    s.book.analysisGroupsRunning += 1;
    const jobs = s.book.analysisQueue.splice(0, ANALYSIS_GROUP);
    void new Promise<void>((r) => setImmediate(r))
      .then(() => s.loop.claiming)
      .then(() => analyseGroup(s, jobs))
      .catch((err) => s.log.error({ err }, 'call analysis group failed'))
      .finally(() => {
        s.book.analysisGroupsRunning -= 1;
        startAnalysisGroups(s);
      });
  }
}

async function analyseGroup(s: WorkerState, jobs: AnalysisJob[]): Promise<void> {
  const [started, optOutRule] = await Promise.all([
    Promise.all(jobs.map((j) => enqueueWrite(s, processingWrite(s, j), j.callbackUrl))),
    optOutKeysOf(s, jobs),
  ]);
  await Promise.all(
    jobs.map(async (j, i) => {
      if (!started[i]) {
        s.book.analysing.delete(j.callId);
        return;
      }
      let write: CallWrite;
      try {
        // A transcript lost with a crashed worker cannot be analysed.
        if (!j.transcript) throw new Error('no transcript stored for the call');
        const r = await s.analyser.analyse({
          transcript: j.transcript,
          outcomeKeys: j.outcomeKeys,
          contactMetadata: j.metadata,
          callStatus: j.status,
          hangupBy: j.hangupBy,
          contactName: j.contactName,
        });
        write = transcriptWrite(callRef(j), s.settings.id, j.status, {
          transcriptStatus: 'ready',
          summary: r.summary,
          outcomes: r.outcomes,
          optOut: detectsOptOut(optOutRule(j), r.outcomes, j.transcript),
        });
      } catch (err) {
        s.log.warn({ err, callId: j.callId }, 'call analysis failed');
        write = transcriptWrite(callRef(j), s.settings.id, j.status, { transcriptStatus: 'failed' });
      }
      await enqueueWrite(s, write, j.callbackUrl);
      s.book.analysing.delete(j.callId);
    }),
  );
}

/** Takes over analyses whose worker went away (their lease lapsed) and runs them here. */
export async function recoverAnalyses(s: WorkerState, now: Date): Promise<number> {
  const stale = await takeOverStaleAnalysis(s.deps, s.settings.id, now, s.settings.leaseMs);
  if (stale.length === 0) return 0;
  await loadBatchSettings(
    s,
    stale.map((c) => c.batchId),
  );
  for (const c of stale) {
    const ctx = s.caches.contexts.get(c.batchId);
    const name = c.provider ?? ctx?.provider;
    const provider = name ? knownProvider(s, name) : null;
    analyseCall(s, {
      callId: c.id,
      batchId: c.batchId,
      accountId: c.accountId,
      status: c.status,
      hangupBy: c.hangupBy,
      transcript: c.transcript ?? '',
      contactName: c.name,
      metadata: c.metadata,
      outcomeKeys: ctx?.agent.outcomeKeys ?? [],
      agentId: ctx?.agent.id ?? null,
      optOutOutcomeKey: ctx?.agent.optOutOutcomeKey ?? null,
      callbackUrl: ctx?.callbackUrl,
      recordingEnabled: ctx?.recordingEnabled ?? false,
      providerAnalysis: provider?.analyse && c.providerCallId ? { provider, providerCallId: c.providerCallId } : null,
    });
  }
  return stale.length;
}
