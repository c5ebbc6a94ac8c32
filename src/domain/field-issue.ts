// A problem with one field of a request, at a path both API surfaces can name: the domain's own
// field names (camelCase) and list indexes. Each surface prints it in its own spelling.

export type IssuePath = readonly (string | number)[];

export interface PathIssue {
  path: IssuePath;
  reason: string;
  /** Set on the line that counts the problems left out of a capped list (capped-issues.ts). */
  more?: number;
}

/**
 * The field order of a request, level by level (top-level fields, then each list item's fields):
 * legacy clients read validation details in the contract's field order, whichever check found them.
 */
export type FieldOrder = readonly (readonly string[])[];

function rank(segment: string | number, depth: number, order: FieldOrder): number {
  if (typeof segment === 'number') return segment;
  const position = order[Math.min(depth, order.length - 1)].indexOf(segment);
  return position < 0 ? Number.MAX_SAFE_INTEGER : position;
}

/** Negative when `a` comes first in field order; 0 for the same field. */
export function compareIssuePaths(a: IssuePath, b: IssuePath, order: FieldOrder): number {
  const levels = Math.min(a.length, b.length);
  for (let depth = 0, orderDepth = 0; depth < levels; depth++) {
    const diff = rank(a[depth], orderDepth, order) - rank(b[depth], orderDepth, order);
    if (diff !== 0) return diff;
    if (typeof a[depth] === 'string') orderDepth++;
  }
  return a.length - b.length;
}

/** Issues in field order; issues of the same field keep the order they were found in. */
export function inFieldOrder(issues: readonly PathIssue[], order: FieldOrder): PathIssue[] {
  return [...issues].sort((x, y) => compareIssuePaths(x.path, y.path, order));
}

/** `contacts.0.phoneNumber: <reason>`, `root` naming the request itself. */
export function formatIssue(issue: PathIssue, rename: (field: string) => string = (f) => f, root = 'input'): string {
  if (issue.more !== undefined) return issue.reason;
  const path = issue.path.length ? issue.path.map((s) => (typeof s === 'number' ? String(s) : rename(s))).join('.') : root;
  return `${path}: ${issue.reason}`;
}

/** "Input should be 'a', 'b' or 'c'", as pydantic's literal_error. */
export function literalReason(values: readonly string[]): string {
  const quoted = values.map((v) => `'${v}'`);
  return `Input should be ${quoted.length === 1 ? quoted[0] : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`}`;
}
