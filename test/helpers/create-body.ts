// A create body read as the route and then the service read it, without a database: for the pure
// tests of create-body.test.ts and the timed ones beside it.
import { checkCreateBatchRequest } from '../../src/domain/create-batch-request.ts';
import type { CreateBatchInput, CreateBatchRequest } from '../../src/domain/create-batch-types.ts';
import { AppError } from '../../src/errors.ts';
import { readCreateBatchBody, restDetail } from '../../src/rest/create-batch-body.ts';

/** A valid typed create request (the domain's, camelCase); `over` replaces or adds fields. */
export const typedRequest = (over: Partial<CreateBatchRequest> = {}): CreateBatchRequest => ({
  agentId: 'agt-1',
  versionId: 'pmt-1',
  interruption: true,
  useAlternateNumber: false,
  startMode: 'scheduled',
  scheduleDate: '2024-07-15',
  scheduleTime: '09:00',
  scheduleTimezone: 'America/New_York',
  contacts: [{ contactId: 'c1', phoneNumber: '+14155552671' }],
  ...over,
});

export const POST = { idempotent: false };
export const PUT = { idempotent: true };

type ParseResult = { ok: true; value: CreateBatchInput } | { ok: false; details: string[] };

/** What the route and then the service make of a body, without a database. */
export function parseCreateBatchRequest(body: unknown, opts: { idempotent: boolean; maxCallDurationSeconds?: number }): ParseResult {
  const maxCallDurationSeconds = opts.maxCallDurationSeconds ?? 2_147_483_647;
  let request;
  try {
    request = readCreateBatchBody(body, { idempotent: opts.idempotent, maxCallDurationSeconds });
  } catch (e) {
    if (e instanceof AppError) return { ok: false, details: e.details };
    throw e;
  }
  const checked = checkCreateBatchRequest(request, { maxCallDurationSeconds });
  return checked.ok ? checked : { ok: false, details: checked.issues.map((i) => restDetail(i, body)) };
}

export function validBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    agent_id: 'agt-1',
    version_id: 'pmt-1',
    interruption: true,
    use_alternate_number: false,
    start_mode: 'scheduled',
    schedule_date: '2024-07-15',
    schedule_time: '09:00',
    schedule_timezone: 'America/New_York (EST, UTC-05:00)',
    contacts: [{ contact_id: 'c1', phone_number: '+14155552671' }],
    ...overrides,
  };
}

export function value(body: unknown, opts = POST): CreateBatchInput {
  const result = parseCreateBatchRequest(body, opts);
  if (!result.ok) throw new Error(`expected ok, got ${JSON.stringify(result.details)}`);
  return result.value;
}

export function details(body: unknown, opts = POST): string[] {
  const result = parseCreateBatchRequest(body, opts);
  if (result.ok) throw new Error('expected a validation failure');
  return result.details;
}
