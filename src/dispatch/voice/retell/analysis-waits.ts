// Retell analyses its calls itself (call_analyzed). An analysis is taken from a final call seen
// earlier, else waited for: the stored call_analyzed event of the call, read by its id whenever
// it arrived (before, with or after call_ended, once or redelivered), and after the grace period
// without it get-call: its call_analysis if present, else no analysis (the call's
// transcript_status becomes failed). A failing get-call is asked again with exponential backoff
// (or when Retry-After says), not every poll.
import type { ProviderAnalysis, ProviderAnalysisRequest } from '../provider.ts';
import {
  analysisFromCall,
  hasAnalysis,
  isAnsweredCall,
  isFinalCall,
  recordingOf,
  type RetellAnalysisSource,
  type RetellCallObject,
} from './call-mapping.ts';
import type { RetellClients } from './clients.ts';
import { retryAfterMs } from './dial-errors.ts';

/** Analyses of answered calls seen before they were asked for (only what analyse() reads). */
const KNOWN_MAX = 5_000;
/** Longest wait between get-calls of an analysis whose get-call keeps failing. */
const ANALYSIS_RETRY_MAX_MS = 60_000;

interface AnalysisWait {
  req: ProviderAnalysisRequest;
  /** get-call is asked from this instant (app clock, ms). */
  dueAt: number;
  /** Failed get-calls are retried until this instant; then the analysis is given up. */
  giveUpAt: number;
  /** After a failed get-call: not asked again before this instant (app clock, ms). */
  nextTryAt: number;
  failures: number;
  resolve: Array<(a: ProviderAnalysis | null) => void>;
  reject: Array<(err: Error) => void>;
}

export interface AnalysisWaitsOptions {
  client: RetellClients;
  keyFor(accountId: string): Promise<string | null>;
  /** The call objects of the call_analyzed events stored for these Retell calls. */
  analyzed(retellCallIds: string[]): Promise<RetellCallObject[]>;
  now(): Date;
  graceMs: number;
  backoffMs: number;
  onError(err: unknown, context: string): void;
}

function analysisOf(c: RetellAnalysisSource, req: ProviderAnalysisRequest): ProviderAnalysis | null {
  const a = analysisFromCall(c, req.outcomeKeys);
  if (a && req.wantRecording) a.recording = recordingOf(c);
  return a;
}

export class AnalysisWaits {
  private readonly waits = new Map<string, AnalysisWait>();
  private readonly known = new Map<string, RetellAnalysisSource>();

  constructor(private readonly o: AnalysisWaitsOptions) {}

  get size(): number {
    return this.waits.size;
  }

  /** Keeps a final call's analysis for a later analyse(): only answered calls are ever asked. */
  remember(c: RetellCallObject): void {
    if (!hasAnalysis(c) || !isFinalCall(c) || !isAnsweredCall(c)) return;
    this.known.delete(c.call_id);
    this.known.set(c.call_id, { call_analysis: c.call_analysis, recording_url: c.recording_url });
    if (this.known.size > KNOWN_MAX) this.known.delete(this.known.keys().next().value!);
  }

  /** The analysis now if it is known, else a promise settled by a later poll(). */
  analyse(req: ProviderAnalysisRequest): ProviderAnalysis | null | Promise<ProviderAnalysis | null> {
    const c = this.known.get(req.providerCallId);
    if (c) {
      this.known.delete(req.providerCallId);
      return analysisOf(c, req);
    }
    return new Promise<ProviderAnalysis | null>((resolve, reject) => {
      const w = this.waits.get(req.providerCallId);
      if (w) {
        w.resolve.push(resolve);
        w.reject.push(reject);
        return;
      }
      const now = this.o.now().getTime();
      this.waits.set(req.providerCallId, {
        req,
        dueAt: now + this.o.graceMs,
        giveUpAt: now + 2 * this.o.graceMs + 60_000,
        nextTryAt: 0,
        failures: 0,
        resolve: [resolve],
        reject: [reject],
      });
    });
  }

  async poll(): Promise<void> {
    const stored = await this.o.analyzed([...this.waits.keys()]);
    for (const c of stored) {
      const w = this.waits.get(c.call_id);
      if (w && hasAnalysis(c)) this.settle(c.call_id, analysisOf(c, w.req));
    }
    for (const [id, w] of [...this.waits]) {
      const now = this.o.now().getTime();
      if (now < w.dueAt || now < w.nextTryAt) continue;
      try {
        const key = await this.o.keyFor(w.req.accountId);
        if (!key) throw new Error(`account ${w.req.accountId} has no Retell API key`);
        const c = (await this.o.client(key).call.retrieve(id)) as unknown as RetellCallObject;
        // No call_analyzed within the grace period and none on the call: Retell has no analysis.
        this.settle(id, analysisOf(c, w.req));
      } catch (err) {
        this.o.onError(err, 'analysis get-call');
        if (now >= w.giveUpAt) {
          this.settle(id, null);
          continue;
        }
        w.failures += 1;
        const backoff = Math.min(ANALYSIS_RETRY_MAX_MS, this.o.backoffMs * 2 ** (w.failures - 1));
        w.nextTryAt = now + Math.max(backoff, retryAfterMs(err) ?? 0);
      }
    }
  }

  /**
   * Unfinished analyses are not failed: the calls keep their lease, which lapses, and another
   * worker takes the analysis over.
   */
  close(): void {
    for (const w of this.waits.values()) for (const r of w.reject) r(new Error('retell provider closed'));
    this.waits.clear();
  }

  private settle(id: string, a: ProviderAnalysis | null): void {
    const w = this.waits.get(id);
    if (!w) return;
    this.waits.delete(id);
    for (const r of w.resolve) r(a);
  }
}
