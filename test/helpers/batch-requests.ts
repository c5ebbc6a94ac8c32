// Request bodies for POST/PUT /api/v1/public/call-batches, in the contract's snake_case form.
import type { CreateBatchRequest } from '../../src/domain/create-batch-types.ts';
import { readCreateBatchBody } from '../../src/rest/create-batch-body.ts';
import type { SeededAccount } from './app.ts';

export const CALL_BATCHES = '/api/v1/public/call-batches';

/** n distinct valid US numbers (+1 415 55x xxxx), deterministic. */
export function validPhone(i: number): string {
  return `+1415${String(5_500_000 + i).padStart(7, '0')}`;
}

export function makeContacts(n: number, prefix = 'c'): Array<Record<string, unknown>> {
  return Array.from({ length: n }, (_, i) => ({ contact_id: `${prefix}${i + 1}`, phone_number: validPhone(i) }));
}

/** A valid create body for the seeded account; `overrides` replace or add fields (undefined removes). */
export function batchBody(a: SeededAccount, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const body: Record<string, unknown> = {
    agent_id: a.agent.id,
    version_id: a.version.id,
    interruption: true,
    use_alternate_number: false,
    start_mode: 'immediate',
    schedule_date: '2030-01-15',
    schedule_time: '09:30',
    schedule_timezone: 'America/New_York (EST, UTC-05:00)',
    contacts: makeContacts(2),
    ...overrides,
  };
  for (const [k, v] of Object.entries(overrides)) if (v === undefined) delete body[k];
  return body;
}

/** A create body as the REST facade hands it to the service (PUT when it has an idempotency_key). */
export function asCreateRequest(body: Record<string, unknown>): CreateBatchRequest {
  return readCreateBatchBody(body, { idempotent: body.idempotency_key !== undefined, maxCallDurationSeconds: 2_147_483_647 });
}

/** A valid typed `CreateCallBatchInput` (GraphQL) for the seeded account; `overrides` replace or add fields. */
export function typedInput(a: SeededAccount, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    agentId: a.agent.id,
    versionId: a.version.id,
    interruption: true,
    useAlternateNumber: false,
    startMode: 'immediate',
    scheduleDate: '2030-01-15',
    scheduleTime: '09:30',
    scheduleTimezone: 'America/New_York',
    contacts: [0, 1].map((i) => ({ contactId: `c${i + 1}`, phoneNumber: validPhone(i) })),
    ...overrides,
  };
}
