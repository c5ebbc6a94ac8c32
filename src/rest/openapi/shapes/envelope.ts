// What the envelopes carry besides the data: a list page's pagination, and the detail error form.
import { MAX_LISTED_REJECTIONS } from '../../../errors.ts';
import type { Pagination } from '../../mappers.ts';
import { bool, closed, count, int, type JsonSchema, ref, str } from '../json-schema.ts';

export const pagination = closed<Pagination>({
  page: int('Current page, 1-indexed', { minimum: 1 }),
  limit: int('Page size in effect', { minimum: 1 }),
  total: count('Total matching items'),
  has_more: bool('Whether further pages exist'),
});

// Closed, with two optional fields beside `detail` that only the create's "All contacts are
// invalid" carries: why each contact was rejected (the contract's text stays as it is).
export const detailError: JsonSchema = {
  type: 'object',
  description: "The contract's detail form: authentication failures, not found, business rules.",
  required: ['detail'],
  properties: {
    detail: str(),
    rejected_contacts: count('Only with `All contacts are invalid`: contacts rejected (all of them)'),
    validation_errors: {
      type: 'array',
      items: ref('ValidationError'),
      maxItems: MAX_LISTED_REJECTIONS,
      description: `Only with \`All contacts are invalid\`: why, the first ${MAX_LISTED_REJECTIONS.toLocaleString('en-US')} rejections in submission order (the create result's elements)`,
    },
  },
  additionalProperties: false,
};
