// Post-call analysis seam: produces the call record's `summary` and `outcomes` from the transcript.
// The local analyser is the default; an LLM-backed one can plug in behind the same interface. A voice
// provider that analyses its own calls (VoiceProvider.analyse, e.g. Retell's call_analysis) replaces
// this for its calls: the worker then waits for the provider's analysis instead.

export interface AnalysisInput {
  transcript: string;
  /** Outcome keys configured on the agent; the result has exactly these keys. */
  outcomeKeys: string[];
  contactMetadata: Record<string, unknown>;
  callStatus: string;
  hangupBy: string | null;
  /** Improves the summary when known; otherwise it is read from the transcript's greeting. */
  contactName?: string | null;
}

export interface AnalysisResult {
  summary: string;
  outcomes: Record<string, string>;
}

export interface Analyser {
  readonly name: string;
  analyse(input: AnalysisInput): Promise<AnalysisResult>;
}
