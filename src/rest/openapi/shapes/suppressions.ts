// The do-not-call list: an entry, and the add request and its result.
import { MAX_PHONE_NUMBER_LENGTH, MAX_SUPPRESSION_REASON_LENGTH, MAX_SUPPRESSIONS_PER_REQUEST } from '../../../domain/limits.ts';
import type { AddSuppressionsOut, SuppressionOut } from '../../mappers.ts';
import { closed, count, type JsonSchema, nullable, str, timestamp } from '../json-schema.ts';

export const suppression = closed<SuppressionOut>({
  phone_number: str('E.164'),
  reason: nullable(str(undefined, { maxLength: MAX_SUPPRESSION_REASON_LENGTH })),
  source: str('`api` (an API key), `cli` (the operator token), or `call:<call_id>` for an opt-out'),
  created_at: timestamp(),
});

export const addSuppressionsRequest: JsonSchema = {
  type: 'object',
  description: "Unknown fields are ignored. Numbers are read with the contacts' phone rules and stored in E.164.",
  required: ['phone_numbers'],
  properties: {
    phone_numbers: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_SUPPRESSIONS_PER_REQUEST,
      items: str(undefined, { maxLength: MAX_PHONE_NUMBER_LENGTH }),
    },
    reason: nullable(str(undefined, { maxLength: MAX_SUPPRESSION_REASON_LENGTH })),
  },
};

export const addSuppressionsResult = closed<AddSuppressionsOut>({
  added: count('Numbers newly put on the list'),
  already_listed: count('Distinct numbers of the request that were listed already'),
});
