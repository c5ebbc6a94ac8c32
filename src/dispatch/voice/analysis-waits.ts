// A provider that analyses its calls itself (Retell's call_analyzed, Vapi's end-of-call-report)
// hands the analysis over through this: taken from a final call seen earlier, else waited for — the
// stored analysis event of the call, read by its id whenever it arrived (once or redelivered), and
// after the grace period without it the call fetched from the provider: its analysis if present,
// else none (the call's transcript_status becomes failed). A failing fetch is asked again with
// exponential backoff (or when Retry-After says), not every poll.
import type { ProviderAnalysis, ProviderAnalysisRequest } from './provider.ts';

/** Analyses of answered calls seen before they were asked for (only what analyse() reads). */
const KNOWN_MAX = 5_000;
/** Longest wait between fetches of an analysis whose fetch keeps failing. */
const ANALYSIS_RETRY_MAX_MS = 60_000;

interface AnalysisWait {
  req: ProviderAnalysisRequest;
  /** The call is fetched from this instant (app clock, ms). */
  dueAt: number;
  /** Failed fetches are retried until this instant; then the analysis is given up. */
  giveUpAt: number;
  /** After a failed fetch: not asked again before this instant (app clock, ms). */
  nextTryAt: number;
  failures: number;
  resolve: Array<(a: ProviderAnalysis | null) => void>;
  reject: Array<(err: Error) => void>;
}

/** What a provider's call objects are to the waits. `Source` is the part an analysis is read from. */
export interface AnalysisCalls<Source, Call extends Source> {
  /** The provider's name, for errors. */
  provider: string;
  idOf(c: Call): string;
  hasAnalysis(c: Call): boolean;
  /** A final, answered call: only those are ever asked for, so only those are kept. */
  isFinalAnswered(c: Call): boolean;
  /** The part of the call kept until it is asked for. */
  sourceOf(c: Call): Source;
  analysisOf(s: Source, outcomeKeys: string[]): ProviderAnalysis | null;
  recordingOf(s: Source): ProviderAnalysis['recording'];
  /** The calls of the analysis events stored for these provider call ids. */
  stored(providerCallIds: string[]): Promise<Call[]>;
  /** The call as the provider has it now, with the account's key. */
  fetch(apiKey: string, providerCallId: string): Promise<Call>;
  /** The wait the provider asked for after a failed fetch; `now`: the app clock (ms), for a Retry-After date. */
  retryAfterMs(err: unknown, now: number): number | null | undefined;
}

export interface AnalysisWaitsOptions<Source, Call extends Source> {
  calls: AnalysisCalls<Source, Call>;
  keyFor(accountId: string): Promise<string | null>;
  now(): Date;
  graceMs: number;
  backoffMs: number;
  onError(err: unknown, context: string): void;
}

export class AnalysisWaits<Source, Call extends Source> {
  private readonly waits = new Map<string, AnalysisWait>();
  private readonly known = new Map<string, Source>();
  private readonly calls: AnalysisCalls<Source, Call>;

  constructor(private readonly o: AnalysisWaitsOptions<Source, Call>) {
    this.calls = o.calls;
  }

  get size(): number {
    return this.waits.size;
  }

  /** Keeps a final call's analysis for a later analyse(): only answered calls are ever asked. */
  remember(c: Call): void {
    if (!this.calls.hasAnalysis(c) || !this.calls.isFinalAnswered(c)) return;
    const id = this.calls.idOf(c);
    this.known.delete(id);
    this.known.set(id, this.calls.sourceOf(c));
    if (this.known.size > KNOWN_MAX) this.known.delete(this.known.keys().next().value!);
  }

  /** The analysis now if it is known, else a promise settled by a later poll(). */
  analyse(req: ProviderAnalysisRequest): ProviderAnalysis | null | Promise<ProviderAnalysis | null> {
    const c = this.known.get(req.providerCallId);
    if (c) {
      this.known.delete(req.providerCallId);
      return this.analysisOf(c, req);
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
    for (const c of await this.calls.stored([...this.waits.keys()])) {
      const id = this.calls.idOf(c);
      const w = this.waits.get(id);
      if (w && this.calls.hasAnalysis(c)) this.settle(id, this.analysisOf(c, w.req));
    }
    for (const [id, w] of [...this.waits]) {
      const now = this.o.now().getTime();
      if (now < w.dueAt || now < w.nextTryAt) continue;
      try {
        const key = await this.o.keyFor(w.req.accountId);
        if (!key) throw new Error(`account ${w.req.accountId} has no ${this.calls.provider} API key`);
        // No analysis event within the grace period and none on the call: the provider has none.
        this.settle(id, this.analysisOf(await this.calls.fetch(key, id), w.req));
      } catch (err) {
        this.o.onError(err, 'analysis get-call');
        if (now >= w.giveUpAt) {
          this.settle(id, null);
          continue;
        }
        w.failures += 1;
        const backoff = Math.min(ANALYSIS_RETRY_MAX_MS, this.o.backoffMs * 2 ** (w.failures - 1));
        w.nextTryAt = now + Math.max(backoff, this.calls.retryAfterMs(err, now) ?? 0);
      }
    }
  }

  /** Unfinished analyses are not failed: the calls keep their lease, which lapses, and another worker takes them over. */
  close(): void {
    for (const w of this.waits.values()) for (const r of w.reject) r(new Error(`${this.calls.provider} provider closed`));
    this.waits.clear();
  }

  private analysisOf(s: Source, req: ProviderAnalysisRequest): ProviderAnalysis | null {
    const a = this.calls.analysisOf(s, req.outcomeKeys);
    if (a && req.wantRecording) a.recording = this.calls.recordingOf(s);
    return a;
  }

  private settle(id: string, a: ProviderAnalysis | null): void {
    const w = this.waits.get(id);
    if (!w) return;
    this.waits.delete(id);
    for (const r of w.resolve) r(a);
  }
}
