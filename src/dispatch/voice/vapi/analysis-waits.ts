// Vapi analyses its calls itself: the end-of-call-report ("sent when the call ends and
// post-processing is complete") carries `analysis` (summary, structuredData). An analysis is taken
// from a final call seen earlier, else waited for: the stored end-of-call-report of the call, read
// by its id whenever it arrived (once or redelivered), and after the grace period without it
// GET /call/{id}: its analysis if present, else none (the call's transcript_status becomes
// failed). A failing GET is asked again with exponential backoff (or when Retry-After says).
import type { ProviderAnalysis, ProviderAnalysisRequest } from '../provider.ts';
import {
  analysisFromCall,
  hasAnalysis,
  isAnsweredCall,
  isFinalCall,
  recordingOf,
  type VapiAnalysisSource,
  type VapiCallObject,
} from './call-mapping.ts';
import type { VapiClients } from './clients.ts';
import { retryAfterMs } from './dial-errors.ts';

/** Analyses of answered calls seen before they were asked for (only what analyse() reads). */
const KNOWN_MAX = 5_000;
/** Longest wait between GETs of an analysis whose GET keeps failing. */
const ANALYSIS_RETRY_MAX_MS = 60_000;

interface AnalysisWait {
  req: ProviderAnalysisRequest;
  dueAt: number;
  giveUpAt: number;
  nextTryAt: number;
  failures: number;
  resolve: Array<(a: ProviderAnalysis | null) => void>;
  reject: Array<(err: Error) => void>;
}

export interface AnalysisWaitsOptions {
  client: VapiClients;
  keyFor(accountId: string): Promise<string | null>;
  /** The calls of the end-of-call-reports stored for these Vapi calls. */
  reports(vapiCallIds: string[]): Promise<VapiCallObject[]>;
  now(): Date;
  graceMs: number;
  backoffMs: number;
  onError(err: unknown, context: string): void;
}

function analysisOf(c: VapiAnalysisSource, req: ProviderAnalysisRequest): ProviderAnalysis | null {
  const a = analysisFromCall(c, req.outcomeKeys);
  if (a && req.wantRecording) a.recording = recordingOf(c);
  return a;
}

export class VapiAnalysisWaits {
  private readonly waits = new Map<string, AnalysisWait>();
  private readonly known = new Map<string, VapiAnalysisSource>();

  constructor(private readonly o: AnalysisWaitsOptions) {}

  get size(): number {
    return this.waits.size;
  }

  /** Keeps a final call's analysis for a later analyse(): only answered calls are ever asked. */
  remember(c: VapiCallObject): void {
    if (!hasAnalysis(c) || !isFinalCall(c) || !isAnsweredCall(c)) return;
    this.known.delete(c.id);
    this.known.set(c.id, { analysis: c.analysis, artifact: c.artifact });
    if (this.known.size > KNOWN_MAX) this.known.delete(this.known.keys().next().value!);
  }

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
    for (const c of await this.o.reports([...this.waits.keys()])) {
      const w = this.waits.get(c.id);
      if (w && hasAnalysis(c)) this.settle(c.id, analysisOf(c, w.req));
    }
    for (const [id, w] of [...this.waits]) {
      const now = this.o.now().getTime();
      if (now < w.dueAt || now < w.nextTryAt) continue;
      try {
        const key = await this.o.keyFor(w.req.accountId);
        if (!key) throw new Error(`account ${w.req.accountId} has no Vapi API key`);
        const c = (await this.o.client(key).calls.get({ id })) as unknown as VapiCallObject;
        // No end-of-call-report within the grace period and none on the call: Vapi has no analysis.
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

  /** Unfinished analyses are not failed: the calls keep their lease, which lapses, and another worker takes them over. */
  close(): void {
    for (const w of this.waits.values()) for (const r of w.reject) r(new Error('vapi provider closed'));
    this.waits.clear();
  }

  private settle(id: string, a: ProviderAnalysis | null): void {
    const w = this.waits.get(id);
    if (!w) return;
    this.waits.delete(id);
    for (const r of w.resolve) r(a);
  }
}
