// The batch options table (src/domain/batch-options.ts) and the checks the create request makes
// of each option, without a database.
import { describe, expect, it } from 'vitest';
import { BATCH_OPTION_NAMES, BATCH_OPTION_REST_NAMES, BATCH_OPTIONS, batchOptionExamples, batchOptionsOut } from '../../src/domain/batch-options.ts';
import { checkCreateBatchRequest } from '../../src/domain/create-batch-request.ts';
import { CREATE_BATCH_FIELD_ORDER } from '../../src/domain/create-batch-fields.ts';
import { typedRequest } from '../helpers/create-body.ts';
import type { CreateBatchRequest } from '../../src/domain/create-batch-types.ts';
import { snakeCase } from '../../src/domain/text-forms.ts';
import { voicemailLeftUnder, voicemailSetting } from '../../src/domain/voicemail.ts';

const request = typedRequest;

describe('batch options', () => {
  it('are listed after the contract fields in the problem order, by their domain names', () => {
    const top = CREATE_BATCH_FIELD_ORDER[0];
    expect(top.slice(-BATCH_OPTION_NAMES.length)).toEqual(BATCH_OPTION_NAMES);
    expect(top.indexOf('complianceProfiles')).toBe(top.length - BATCH_OPTION_NAMES.length - 1);
  });

  it('go out under their REST names, every one present, null where none was given', () => {
    expect(BATCH_OPTION_REST_NAMES).toEqual(BATCH_OPTION_NAMES.map((n) => snakeCase(n)));
    expect(batchOptionsOut({ label: 'Q3', voicemail: 'hangup', voicemailMessage: null })).toEqual({
      label: 'Q3',
      voicemail: 'hangup',
      voicemail_message: null,
    });
    expect(batchOptionsOut({} as never)).toEqual(Object.fromEntries(BATCH_OPTION_REST_NAMES.map((n) => [n, null])));
  });

  it('have examples their checks accept together (voicemail and its message are checked as a pair)', () => {
    const examples = batchOptionExamples();
    const given = Object.fromEntries(BATCH_OPTION_NAMES.map((name) => [name, examples[snakeCase(name) as keyof typeof examples]]));
    const result = checkCreateBatchRequest(request(given));
    for (const name of BATCH_OPTION_NAMES) expect(result.ok && result.value.options[name], name).toBe(BATCH_OPTIONS[name].example);
  });

  it('label: kept as given, blank or absent is null, over its limit refused (counted in characters, not UTF-16 units)', () => {
    const options = (label: string | null | undefined) => {
      const r = checkCreateBatchRequest(request({ label }));
      return r.ok ? r.value.options : r.issues;
    };
    const none = { voicemail: null, voicemailMessage: null };
    expect(options(' Spring ')).toEqual({ label: ' Spring ', ...none });
    expect(options('  ')).toEqual({ label: null, ...none });
    expect(options(null)).toEqual({ label: null, ...none });
    expect(options(undefined)).toEqual({ label: null, ...none });
    expect(options('😀'.repeat(200))).toEqual({ label: '😀'.repeat(200), ...none });
    expect(options('x'.repeat(201))).toEqual([{ path: ['label'], reason: 'String should have at most 200 characters' }]);
  });

  describe('voicemail', () => {
    const check = (voicemail: unknown, voicemailMessage?: string | null) => {
      const r = checkCreateBatchRequest(request({ voicemail: voicemail as CreateBatchRequest['voicemail'], voicemailMessage }));
      return r.ok ? { voicemail: r.value.options.voicemail, voicemailMessage: r.value.options.voicemailMessage } : r.issues;
    };

    it('absent: null, the provider keeps its own behaviour', () => {
      expect(check(undefined)).toEqual({ voicemail: null, voicemailMessage: null });
      expect(check(null, null)).toEqual({ voicemail: null, voicemailMessage: null });
    });

    it('hangup alone, or leave_message with a message, are kept', () => {
      expect(check('hangup')).toEqual({ voicemail: 'hangup', voicemailMessage: null });
      expect(check('leave_message', 'Call us back')).toEqual({ voicemail: 'leave_message', voicemailMessage: 'Call us back' });
    });

    it('a word outside the list is refused as the contract words a literal', () => {
      expect(check('voicemail')).toEqual([{ path: ['voicemail'], reason: "Input should be 'hangup' or 'leave_message'" }]);
    });

    it('leave_message needs a message that is not blank, reported at voicemailMessage', () => {
      const reason = "Value error, voicemail_message is required when voicemail is 'leave_message'";
      expect(check('leave_message')).toEqual([{ path: ['voicemailMessage'], reason }]);
      expect(check('leave_message', '   ')).toEqual([{ path: ['voicemailMessage'], reason }]);
    });

    it('a message that would never play (hangup, or no voicemail setting) is refused', () => {
      const reason = "Value error, voicemail_message is only used when voicemail is 'leave_message'";
      expect(check('hangup', 'Hi')).toEqual([{ path: ['voicemailMessage'], reason }]);
      expect(check(null, 'Hi')).toEqual([{ path: ['voicemailMessage'], reason }]);
    });

    it('the message is held to 1,000 characters, and only its own problem is reported then', () => {
      expect(check('leave_message', 'x'.repeat(1000))).toEqual({ voicemail: 'leave_message', voicemailMessage: 'x'.repeat(1000) });
      expect(check('leave_message', 'x'.repeat(1001))).toEqual([
        { path: ['voicemailMessage'], reason: 'String should have at most 1000 characters' },
      ]);
    });

    it('is turned into what a dial asks of its provider, and tells whether a reached voicemail got the message', () => {
      expect(voicemailSetting({ voicemail: null, voicemailMessage: null })).toBeNull();
      expect(voicemailSetting({ voicemail: 'hangup', voicemailMessage: null })).toEqual({ action: 'hangup' });
      expect(voicemailSetting({ voicemail: 'leave_message', voicemailMessage: 'Hi' })).toEqual({ action: 'leave_message', message: 'Hi' });
      expect(voicemailLeftUnder({ action: 'leave_message', message: 'Hi' }, true)).toBe(true);
      expect(voicemailLeftUnder({ action: 'hangup' }, true)).toBe(false);
      expect(voicemailLeftUnder(null, true)).toBeNull();
      expect(voicemailLeftUnder({ action: 'leave_message', message: 'Hi' }, false)).toBeNull();
    });
  });
});
