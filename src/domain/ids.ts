import { uuidv7 } from 'uuidv7';

/** Prefixes from DESIGN.md; the UUIDv7 body makes lexical id order equal creation order. */
export const ID_PREFIX = {
  account: 'acc_',
  apiKey: 'key_',
  agent: 'agt-',
  promptVersion: 'pmt-',
  didNumber: 'did_',
  batch: 'sched_',
  call: 'call_',
  webhook: 'msg_',
} as const;

export type IdKind = keyof typeof ID_PREFIX;

export function newId(kind: IdKind): string {
  return ID_PREFIX[kind] + uuidv7().replaceAll('-', '');
}

/** Generates `n` ids in one go, still strictly increasing (uuidv7 is monotonic within a process). */
export function newIds(kind: IdKind, n: number): string[] {
  const out = new Array<string>(n);
  for (let i = 0; i < n; i++) out[i] = newId(kind);
  return out;
}
