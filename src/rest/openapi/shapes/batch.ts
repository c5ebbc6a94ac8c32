// A batch as its reads return it: in full, as a list item, and its retry policy and calling window.
import type { BatchDetails, CallingWindowOut, RetryOut } from '../../../services/representations.ts';
import { MAX_ATTEMPTS_LIMIT, RETRY_DELAY_MAX_SECONDS } from '../../../domain/retry-policy.ts';
import { ATTEMPT_OUTCOMES } from '../../../domain/attempt-outcome.ts';
import { START_MODES } from '../../../domain/create-batch-fields.ts';
import type { BatchListItem } from '../../mappers.ts';
import { closed, count, int, nullable, oneOfStrings, ref, str, timestamp } from '../json-schema.ts';
import { agentId, batchId, batchStatus, callingWindowShape, versionId } from './fields.ts';
import { optionDetailShapes } from './batch-options.ts';

/** The five counters whose sum is the accepted contacts, in both batch shapes. */
const batchCounters = { queued: count(), in_progress: count(), completed: count(), failed: count(), cancelled: count() };

export const batchDetails = closed<BatchDetails>(
  {
    batch_id: batchId,
    agent_id: agentId,
    version_id: versionId,
    status: batchStatus,
    start_mode: oneOfStrings(START_MODES),
    scheduled_at: timestamp('schedule_date + schedule_time in the zone, as UTC'),
    timezone: str('Plain IANA zone name'),
    concurrency: int(undefined, { minimum: 1 }),
    total_contacts: count('Contacts submitted'),
    accepted_contacts: count('Contacts that passed validation'),
    rejected_contacts: count('Dropped at creation, never dispatched'),
    callbacks: count('Webhook deliveries made for this batch'),
    ...batchCounters,
    created_at: timestamp(),
    started_at: nullable(timestamp('null before start')),
    completed_at: nullable(timestamp('null until completion')),
    retry: nullable(ref('RetryPolicy')),
    expires_at: nullable(timestamp('No call is placed after this; null: never expires')),
    calling_window: nullable(ref('CallingWindow')),
    enforced_calling_window: nullable(ref('CallingWindow')),
    ...optionDetailShapes(),
  },
  'queued + in_progress + completed + failed + cancelled = accepted_contacts.',
);

export const retryPolicy = closed<RetryOut>(
  {
    max_attempts: int('Dials per call at most, the alternate number included', { minimum: 1, maximum: MAX_ATTEMPTS_LIMIT }),
    on: { type: 'array', items: oneOfStrings(ATTEMPT_OUTCOMES), description: 'Attempt outcomes that are tried again' },
    delay_seconds: int('Wait after an attempt before the next', { minimum: 0, maximum: RETRY_DELAY_MAX_SECONDS }),
  },
  'When and how often a call is tried again (docs/campaigns.md).',
);

export const callingWindow = closed<CallingWindowOut>(
  callingWindowShape,
  "Local hours and days in which calls are placed (docs/campaigns.md); the account's enforced window, if any, narrows it.",
);

export const batchListItem = closed<BatchListItem>({
  batch_id: batchId,
  agent_id: agentId,
  version_id: versionId,
  status: batchStatus,
  total_contacts: count(),
  ...batchCounters,
  created_at: timestamp(),
});
