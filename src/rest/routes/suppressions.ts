// The do-not-call list: GET (paged, filter phone_number), POST (add many), DELETE one number.
// Beyond the published contract; its envelope and both error forms as every other route.
import type { RestRoute, RouteInput } from '../router.ts';
import type { RestAddSuppressionsMutation, RestRemoveSuppressionMutation, RestSuppressionsQuery } from '../../codegen/graphql.ts';
import { QueryReader } from '../query-params.ts';
import { formatIssue } from '../../domain/field-issue.ts';
import { snakeCase } from '../../domain/text-forms.ts';
import { addSuppressionsOut, paginationOut, suppressionOut } from '../mappers.ts';
import { SUPPRESSIONS_PAGE } from '../../services/pagination.ts';
import { SUPPRESSION_NOT_FOUND } from '../../services/suppressions/remove-suppression.ts';
import { MAX_SUPPRESSIONS_OFFSET, suppressionPageIssues } from '../../services/suppressions/list-suppressions.ts';
import { readAddSuppressionsBody } from '../suppressions-body.ts';
import { nullable, pageOf, pageParams, ref, str } from '../openapi/json-schema.ts';
import { paginationExample } from '../openapi/examples.ts';

const PATH = '/api/v1/public/suppressions';

const MESSAGES = {
  list: 'Suppressions fetched successfully',
  add: 'Suppressions added successfully',
  remove: 'Suppression removed successfully',
};

const suppressionExample = { phone_number: '+14155550123', reason: 'asked not to be called', source: 'api', created_at: '2026-11-24T10:00:00.000Z' };

function listVariables({ query }: RouteInput) {
  const q = new QueryReader(query);
  const phoneNumber = q.string('phone_number');
  const limit = q.int('limit', { min: 1, max: SUPPRESSIONS_PAGE.maxLimit });
  const page = q.page();
  const cursor = q.string('cursor');
  // Checked here too, so REST names the parameter as it was sent (`query.page`).
  if (q.issues.length === 0) q.issues.push(...suppressionPageIssues({ page, limit, cursor }));
  q.done();
  return { phoneNumber, page, limit, cursor };
}

/** `%2B1…` and `+1…` name the same number; a malformed escape is left as it is (and matches nothing). */
function pathNumber(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

export const suppressionRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: PATH,
    operation: 'RestSuppressions',
    variables: listVariables,
    respond: (data: RestSuppressionsQuery) => ({
      message: MESSAGES.list,
      data: {
        items: data.suppressions.items.map(suppressionOut),
        pagination: paginationOut(data.suppressions.pagination),
        next_cursor: data.suppressions.nextCursor ?? null,
      },
    }),
    doc: {
      operationId: 'listSuppressions',
      tag: 'Do-not-call list',
      summary: "The account's do-not-call list, newest first",
      description:
        `\`page\` reaches the first ${MAX_SUPPRESSIONS_OFFSET} numbers (422 past them); \`cursor\`, a page's \`next_cursor\`, reads the page after it at any depth, ` +
        'each page costing the same. `total` is kept with every add and removal, not counted.',
      query: [
        { name: 'phone_number', description: 'Only this number, in any form the phone rules read (one they refuse matches nothing)', schema: str() },
        ...pageParams('limit', SUPPRESSIONS_PAGE),
        { name: 'cursor', description: "A page's `next_cursor`: the page after it (not with `page`)", schema: str() },
      ],
      success: [{ status: 200, messages: [MESSAGES.list] }],
      data: pageOf('Suppression', { next_cursor: nullable(str('Pass as `cursor` for the next page; null on the last page')) }),
      example: { items: [suppressionExample], pagination: paginationExample(1), next_cursor: null },
    },
  },
  {
    method: 'POST',
    path: PATH,
    operation: 'RestAddSuppressions',
    variables: (input) => readAddSuppressionsBody(input.body),
    detail: (issue) => `body.${formatIssue(issue, snakeCase)}`,
    respond: (data: RestAddSuppressionsMutation) => ({ status: 200, message: MESSAGES.add, data: addSuppressionsOut(data.addSuppressions) }),
    doc: {
      operationId: 'addSuppressions',
      tag: 'Do-not-call list',
      summary: 'Put numbers on the do-not-call list; a number already listed is not an error',
      description:
        "Every number must pass the contacts' phone rules, or nothing is added (422, `body.phone_numbers.<i>: Invalid phone number`). A list that would pass the account's cap is 422 in the detail form.",
      body: { shape: 'AddSuppressionsRequest', example: { phone_numbers: ['+14155550123', '+442071838750'], reason: 'asked not to be called' } },
      success: [{ status: 200, messages: [MESSAGES.add] }],
      data: ref('AddSuppressionsResult'),
      example: { added: 2, already_listed: 0 },
      errors: ['UNPROCESSABLE'],
      detailExamples: { 422: 'The do-not-call list holds at most 1000000 numbers per account' },
    },
  },
  {
    method: 'DELETE',
    path: `${PATH}/:phone_number`,
    operation: 'RestRemoveSuppression',
    variables: ({ params }) => ({ phoneNumber: pathNumber(params.phone_number) }),
    respond: (data: RestRemoveSuppressionMutation) => ({ message: MESSAGES.remove, data: { phone_number: data.removeSuppression } }),
    doc: {
      operationId: 'removeSuppression',
      tag: 'Do-not-call list',
      summary: 'Take one number off the do-not-call list',
      description: 'The number in the path may be URL-encoded (`%2B14155550123`).',
      success: [{ status: 200, messages: [MESSAGES.remove] }],
      data: { type: 'object', required: ['phone_number'], properties: { phone_number: str('E.164') }, additionalProperties: false },
      example: { phone_number: '+14155550123' },
      errors: ['NOT_FOUND'],
      detailExamples: { 404: SUPPRESSION_NOT_FOUND },
    },
  },
];
