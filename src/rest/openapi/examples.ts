// Sample values shown in the OpenAPI document, typed as the mappers' outputs (a test validates
// every example in the document against its schema).
import type { BatchDetails, CallRecord } from '../../services/representations.ts';
import type { AccountOut, BatchListItem, CreateResult, Pagination } from '../mappers.ts';
import type { ComplianceReportOut, DialAuditOut } from '../compliance-mappers.ts';
import { batchOptionExamples } from '../../domain/batch-options.ts';

const BATCH = 'sched_0197b5f4c1a87c3e9d2f4a6b8c0d1e2f';
const AGENT = 'agt-0197b5f3aa017e21b7d4c0e5f6a7b8c9';
const VERSION = 'pmt-0197b5f3ab027f32c8e5d1f6a7b8c9d0';
const CREATED = '2026-11-24T13:58:02.118Z';

export const accountExample: AccountOut = {
  account_id: 'acc_0197b5f3a9007d10a6c3b9d4e5f6a7b8',
  name: 'Acme',
  email: 'ops@acme.test',
  limits: { max_batch_size: 10000, max_concurrent_calls: 50, max_call_duration_seconds: 1800, rate_limit_per_minute: 600 },
};

export const createRequestExample = {
  agent_name: 'Demo Agent',
  version_name: 'v1',
  interruption: true,
  use_alternate_number: false,
  start_mode: 'immediate',
  schedule_date: '2026-11-24',
  schedule_time: '09:00',
  schedule_timezone: 'America/New_York (EST, UTC-05:00)',
  callback_url: 'https://hooks.acme.test/call-batches',
  contacts: [
    {
      contact_id: 'c-1',
      name: 'Ann',
      phone_number: '+14155550124',
      metadata: { 'First Name': 'Ann' },
      consent: {
        source: 'web_form',
        timestamp: '2026-10-02T16:20:00Z',
        text: 'I agree that Acme may call me about my demo request.',
        reference: 'form-submission-88412',
      },
    },
    { contact_id: 'c-2', phone_number: '+1415555' },
  ],
  ...batchOptionExamples(),
};

export const idempotentCreateRequestExample = { idempotency_key: '2026-11-24-renewals', ...createRequestExample };

export const createResultExample: CreateResult = {
  batch_id: BATCH,
  agent_id: AGENT,
  version_id: VERSION,
  status: 'pending',
  start_mode: 'immediate',
  total_contacts: 2,
  accepted_contacts: 1,
  rejected_contacts: 1,
  validation_errors: [{ index: 2, external_id: 'c-2', field: 'phone_number', message: 'Invalid phone number' }],
  concurrency: 10,
  created_at: CREATED,
  idempotent: false,
  warnings: [
    {
      code: 'alternate_on_do_not_call_list',
      message: "1 alternate number is on the account's do-not-call list and will not be dialled (the primary number is called)",
      contact_count: 1,
      contacts: [{ index: 1, external_id: 'c-1' }],
      contacts_left_out: 0,
    },
  ],
};

/** A repeated PUT with the same idempotency_key: the original create result, marked idempotent. */
export const createReplayExample: CreateResult = { ...createResultExample, idempotent: true };

const counters = { queued: 60, in_progress: 8, completed: 44, failed: 6, cancelled: 0 };

export const batchDetailsExample: BatchDetails = {
  batch_id: BATCH,
  agent_id: AGENT,
  version_id: VERSION,
  status: 'running',
  start_mode: 'immediate',
  scheduled_at: '2026-11-24T14:00:00.000Z',
  timezone: 'America/New_York',
  concurrency: 10,
  total_contacts: 120,
  accepted_contacts: 118,
  rejected_contacts: 2,
  callbacks: 41,
  ...counters,
  created_at: CREATED,
  started_at: '2026-11-24T13:58:02.530Z',
  completed_at: null,
  retry: { max_attempts: 3, on: ['no_answer', 'busy', 'voicemail'], delay_seconds: 3600 },
  expires_at: '2026-12-01T18:00:00.000Z',
  calling_window: { start: '09:00', end: '20:00', days: ['mon', 'tue', 'wed', 'thu', 'fri'], timezone: 'recipient' },
  enforced_calling_window: null,
  ...batchOptionExamples(),
};

export const batchListItemExample: BatchListItem = {
  batch_id: BATCH,
  agent_id: AGENT,
  version_id: VERSION,
  status: 'running',
  total_contacts: 120,
  ...counters,
  created_at: CREATED,
};

export const callRecordExample: CallRecord = {
  call_id: 'call_0197b5f4c1b97d4fae305b7c9d1e2f30',
  batch_id: BATCH,
  contact_id: 'c-1',
  external_id: 'c-1',
  phone_number: '+14155550124',
  agent_id: AGENT,
  agent_name: 'Demo Agent',
  version_id: VERSION,
  version_name: 'v1',
  voice: 'alloy',
  status: 'completed',
  call_status: 'completed',
  transcript_status: 'ready',
  duration_seconds: 74,
  answer_duration_seconds: 69,
  timestamp: '2026-11-24T13:58:03.004Z',
  created_at: CREATED,
  completed_at: '2026-11-24T13:59:17.412Z',
  hangup_by: 'agent',
  disconnect_reason: 'agent_hangup',
  summary: 'Ann wants a demo next Tuesday morning.',
  outcomes: { interested: 'yes', callback_requested: 'no' },
  recording_available: true,
  recording_url: 'https://calls.acme.test/recordings/call_0197b5f4c1b97d4fae305b7c9d1e2f30.wav?expires=1795615157&signature=…',
  llm_transcript: 'Agent: Hello Ann, …\nUser: …',
  attempts: 2,
  next_attempt_at: null,
  timezone: 'America/New_York',
  retry_reason: null,
  primary_phone_number: '+14155550124',
  consent: {
    source: 'web_form',
    timestamp: '2026-10-02T16:20:00.000Z',
    text: 'I agree that Acme may call me about my demo request.',
    reference: 'form-submission-88412',
  },
  voicemail_left: null,
  from_number: '+14155550100',
};

export const paginationExample = (total: number): Pagination => ({ page: 1, limit: 50, total, has_more: total > 50 });

export const dialAuditExample: DialAuditOut = {
  call_id: 'call_0197b5f4c1b97d4fae305b7c9d1e2f30',
  batch_id: BATCH,
  items: [
    {
      attempt: 1,
      phone_number: '+14155550124',
      alternate: false,
      dialled_at: '2026-11-24T17:58:03.004Z',
      allowed_by: 'window_open',
      zones: [{ zone: 'America/Los_Angeles', local_time: '2026-11-24T09:58:03-08:00' }],
      windows: [{ start: '09:00', end: '20:00', days: ['mon', 'tue', 'wed', 'thu', 'fri'], timezone: 'recipient' }],
      window_closes_at: '2026-11-25T04:00:00.000Z',
      rules: [],
      rules_version: null,
      lists: ['account_do_not_call', 'us_national_dnc_registry', 'us_reassigned_numbers'],
    },
  ],
};

export const complianceReportExample: ComplianceReportOut = {
  batch_id: BATCH,
  dials: 52,
  unrestricted_dials: 0,
  dials_without_zone: 0,
  dials_by_local_hour: [
    { zone: 'America/Los_Angeles', hour: 9, dials: 30 },
    { zone: 'America/New_York', hour: 12, dials: 22 },
  ],
  truncated: false,
  blocked: [
    { stage: 'ended', reason: 'suppressed', calls: 3 },
    { stage: 'waiting', reason: 'calling_window', calls: 60 },
  ],
};
