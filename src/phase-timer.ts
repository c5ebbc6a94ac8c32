// Where one request's time went, phase by phase, sent back in the standard Server-Timing header
// when SERVER_TIMING is on (bench/create-batch reads it). Off by default: the header would tell
// any client how long each of the server's steps takes.

/** Ends the phase that ran since the previous mark (or since the request arrived) under `phase`. */
export type MarkPhase = (phase: string) => void;

export class PhaseTimer {
  private readonly startedAt = performance.now();
  private last = this.startedAt;
  /** Milliseconds by phase, in first-seen order; a phase marked again (one per chunk) adds up. */
  private readonly phases = new Map<string, number>();

  readonly mark: MarkPhase = (phase) => {
    const now = performance.now();
    this.phases.set(phase, (this.phases.get(phase) ?? 0) + (now - this.last));
    this.last = now;
  };

  /** The Server-Timing value: each phase, then `total` since the request arrived. */
  header(): string {
    const parts = [...this.phases].map(([name, ms]) => `${name};dur=${ms.toFixed(2)}`);
    parts.push(`total;dur=${(performance.now() - this.startedAt).toFixed(2)}`);
    return parts.join(', ');
  }
}
