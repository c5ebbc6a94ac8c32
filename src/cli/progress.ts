// One line of a batch's progress: a bar of the ended calls and the counters beside it.

export interface BatchCounters {
  batchId: string;
  status: string;
  acceptedContacts: number;
  queued: number;
  inProgress: number;
  completed: number;
  failed: number;
  cancelled: number;
}

const WIDTH = 24;

export function progressLine(p: BatchCounters): string {
  const ended = p.completed + p.failed + p.cancelled;
  const share = p.acceptedContacts ? ended / p.acceptedContacts : 1;
  const filled = Math.round(share * WIDTH);
  const bar = '#'.repeat(filled) + '.'.repeat(WIDTH - filled);
  return `${p.batchId} [${bar}] ${ended}/${p.acceptedContacts} ${p.status}  queued ${p.queued}  in progress ${p.inProgress}  completed ${p.completed}  failed ${p.failed}  cancelled ${p.cancelled}`;
}
