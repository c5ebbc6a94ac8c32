// The problems of one request, kept to the first few in the contract's field order with the rest
// only counted: a list of a million bad contacts is refused in a few kilobytes and in time linear
// in its length, and nothing the client sized is ever spread into a call's arguments (V8 throws
// "Maximum call stack size exceeded" past ~100k of them).
import { compareIssuePaths, inFieldOrder, type FieldOrder, type IssuePath, type PathIssue } from './field-issue.ts';

/** Problems a refused request lists (docs/api.md, Limits); one more line counts the rest. */
export const MAX_LISTED_ISSUES = 1_000;

/** `... and 12,345 more problems`: the line that stands for the problems a list leaves out. */
export function moreProblems(count: number): PathIssue {
  return { path: [], reason: `... and ${count.toLocaleString('en-US')} more ${count === 1 ? 'problem' : 'problems'}`, more: count };
}

export class CappedIssues {
  private kept: PathIssue[] = [];
  private dropped = 0;
  /**
   * The last kept problem once `cap` are kept in order: a problem that sorts at or after it can't be
   * among the first `cap` (those before it were found earlier), so it is only counted. Contacts are
   * checked in index order, so past the first `cap` each problem costs one comparison.
   */
  private boundary: PathIssue | null = null;

  constructor(
    private readonly order: FieldOrder,
    readonly cap = MAX_LISTED_ISSUES,
  ) {}

  /** Every problem found, listed or counted. */
  get count(): number {
    return this.kept.length + this.dropped;
  }

  add(path: IssuePath, reason: string): void {
    this.push({ path, reason });
  }

  /** A list of problems, possibly capped already (its counting line is counted, not kept). */
  addAll(issues: readonly PathIssue[]): void {
    for (const issue of issues) {
      if (issue.more !== undefined) this.dropped += issue.more;
      else this.push(issue);
    }
  }

  /** The first `limit` problems in field order, then one line counting the rest if any. */
  list(limit = this.cap): PathIssue[] {
    this.trim();
    const shown = this.kept.slice(0, limit);
    const rest = this.count - shown.length;
    return rest > 0 ? [...shown, moreProblems(rest)] : shown;
  }

  private push(issue: PathIssue): void {
    if (this.boundary && compareIssuePaths(issue.path, this.boundary.path, this.order) >= 0) {
      this.dropped++;
      return;
    }
    this.kept.push(issue);
    if (this.kept.length >= 2 * this.cap) this.trim();
  }

  /** Sorted (stably: a field's problems keep the order they were found in) and cut to `cap`. */
  private trim(): void {
    const sorted = inFieldOrder(this.kept, this.order);
    if (sorted.length >= this.cap) {
      this.dropped += sorted.length - this.cap;
      sorted.length = this.cap;
      this.boundary = sorted[this.cap - 1];
    }
    this.kept = sorted;
  }
}
