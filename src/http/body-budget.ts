// Request bodies this process holds at once. A body counts from its first byte until its response
// is ready (the parsed JSON lives that long too), so many large bodies in parallel get a 503 and
// a Retry-After instead of taking the heap: one full MAX_BODY_BYTES body always fits.
import { AppError } from '../errors.ts';

export interface BodyLease {
  /** Counts `bytes` more of this request's body; throws 503 when the process holds too much. */
  take(bytes: number): void;
  release(): void;
}

export interface BodyBudget {
  open(): BodyLease;
}

export function createBodyBudget(maxBytes: number): BodyBudget {
  let used = 0;
  return {
    open() {
      let held = 0;
      return {
        take(bytes) {
          if (used + bytes > maxBytes) {
            throw new AppError('UNAVAILABLE', 'The server is receiving too many request bodies at once; retry shortly', [], { 'Retry-After': '1' });
          }
          used += bytes;
          held += bytes;
        },
        release() {
          used -= held;
          held = 0;
        },
      };
    },
  };
}
