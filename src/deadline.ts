// A promise raced against a timer: `p`, or a rejection with `late()` after `ms` (p runs on, its
// outcome ignored). Used by the readiness checks (the dispatch worker races its scheduler instead: src/scheduler.ts).
export function rejectAfter<T>(p: Promise<T>, ms: number, late: () => Error): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late()), Math.max(0, ms));
  });
  p.catch(() => undefined);
  return Promise.race([p, expired]).finally(() => clearTimeout(timer));
}
