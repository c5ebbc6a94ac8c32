// Field schemas that several shapes share, so a batch id or a calling window reads the same in each.
import { RECIPIENT_ZONE, WEEKDAYS } from '../../../domain/calling-window.ts';
import { BATCH_STATUSES } from '../../../domain/batch-state.ts';
import { oneOfStrings, str } from '../json-schema.ts';

export const batchStatus = oneOfStrings(BATCH_STATUSES, 'Batch status');
export const batchId = str('Batch id, `sched_<id>`', { pattern: '^sched_' });
export const agentId = str('Agent id, `agt-<id>`');
export const versionId = str('Prompt version id, `pmt-<id>`');

export const callingWindowShape = {
  start: str('Local HH:MM, inclusive', { examples: ['09:00'] }),
  end: str('Local HH:MM, exclusive; after start (no overnight windows); 24:00 is the end of the day', { examples: ['20:00', '24:00'] }),
  days: { type: 'array', items: oneOfStrings(WEEKDAYS), description: 'Days of the week it opens on' },
  timezone: str(
    `An IANA zone, or "${RECIPIENT_ZONE}": each contact's zones from its number (or its own timezone), open only when open in all of them`,
  ),
} as const;
