// What the campaign's fake provider (fake-provider.ts) logs: one JSON line per create-phone-call
// (made, or refused by a fault mode) and per stop-call, with the sending process and the time the
// request arrived; and how the checker reads that log back.
import fs from 'node:fs';

/** The Retell API key every process of the campaign uses (the account's provider key). */
export const FAKE_API_KEY = 'key_fault_campaign_0123456789abcdef';

export interface ProviderLogLine {
  /** When the request arrived (ms since the epoch, the fake's clock: the machine's). */
  t: number;
  /** When a create's call was made (after a slow mode's delay). */
  answeredAt?: number;
  kind: 'create' | 'create_refused' | 'stop' | 'ended';
  /** The process that sent it: the path segment of its RETELL_BASE_URL (a worker's WORKER_ID); `provider` for an end. */
  proc: string;
  retellCallId?: string;
  /** Our call id and attempt, from the create's metadata (for a stop: of the call it named). */
  callId?: string;
  attempt?: number;
  to?: string;
  /** A stop's call status at the fake when it arrived. */
  status?: string;
  /** An end's: the call had been answered (it has a transcript). */
  answered?: boolean;
  reason?: string;
}

/** The log's lines from byte `from` on (a round reads what it added). */
export function readProviderLog(path: string, from = 0): { lines: ProviderLogLine[]; size: number } {
  if (!fs.existsSync(path)) return { lines: [], size: 0 };
  const buf = fs.readFileSync(path);
  const text = buf.subarray(from).toString('utf8');
  const lines = text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ProviderLogLine);
  return { lines, size: buf.length };
}
