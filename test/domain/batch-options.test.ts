// The batch options table (src/domain/batch-options.ts) and the checks the create request makes
// of each option, without a database.
import { describe, expect, it } from 'vitest';
import { BATCH_OPTION_NAMES, BATCH_OPTION_REST_NAMES, BATCH_OPTIONS, batchOptionExamples, batchOptionsOut } from '../../src/domain/batch-options.ts';
import { checkCreateBatchRequest } from '../../src/domain/create-batch-request.ts';
import { CREATE_BATCH_FIELD_ORDER } from '../../src/domain/create-batch-fields.ts';
import type { CreateBatchRequest } from '../../src/domain/create-batch-types.ts';
import { snakeCase } from '../../src/domain/text-forms.ts';

const request = (over: Partial<CreateBatchRequest> = {}): CreateBatchRequest => ({
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

describe('batch options', () => {
  it('are listed after the contract fields in the problem order, by their domain names', () => {
    const top = CREATE_BATCH_FIELD_ORDER[0];
    expect(top.slice(-BATCH_OPTION_NAMES.length)).toEqual(BATCH_OPTION_NAMES);
    expect(top.indexOf('complianceProfiles')).toBe(top.length - BATCH_OPTION_NAMES.length - 1);
  });

  it('go out under their REST names, every one present, null where none was given', () => {
    expect(BATCH_OPTION_REST_NAMES).toEqual(BATCH_OPTION_NAMES.map((n) => snakeCase(n)));
    expect(batchOptionsOut({ label: 'Q3' })).toEqual({ label: 'Q3' });
    expect(batchOptionsOut({} as never)).toEqual(Object.fromEntries(BATCH_OPTION_REST_NAMES.map((n) => [n, null])));
  });

  it('each has an example its own checks accept', () => {
    const examples = batchOptionExamples();
    for (const name of BATCH_OPTION_NAMES) {
      const result = checkCreateBatchRequest(request({ [name]: examples[snakeCase(name) as keyof typeof examples] }));
      expect(result.ok && result.value.options[name], name).toBe(BATCH_OPTIONS[name].example);
    }
  });

  it('label: kept as given, blank or absent is null, over its limit refused (counted in characters, not UTF-16 units)', () => {
    const options = (label: string | null | undefined) => {
      const r = checkCreateBatchRequest(request({ label }));
      return r.ok ? r.value.options : r.issues;
    };
    expect(options(' Spring ')).toEqual({ label: ' Spring ' });
    expect(options('  ')).toEqual({ label: null });
    expect(options(null)).toEqual({ label: null });
    expect(options(undefined)).toEqual({ label: null });
    expect(options('😀'.repeat(200))).toEqual({ label: '😀'.repeat(200) });
    expect(options('x'.repeat(201))).toEqual([{ path: ['label'], reason: 'String should have at most 200 characters' }]);
  });
});
