// Post-call analysis seam: produces the call record's `summary` and `outcomes`. The local
// analyser is the default; an LLM-backed one can plug in behind the same interface.

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
