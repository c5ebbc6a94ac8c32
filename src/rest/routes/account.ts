import type { RestRoute } from '../router.ts';
import type { RestMeQuery } from '../../codegen/graphql.ts';
import { accountOut } from '../mappers.ts';
import { ref } from '../openapi/json-schema.ts';
import { accountExample } from '../openapi/examples.ts';

const FETCHED = 'Account details fetched successfully';

export const accountRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/api/v1/public/me',
    operation: 'RestMe',
    respond: (data: RestMeQuery) => ({
      message: FETCHED,
      data: accountOut(data.me),
    }),
    doc: {
      operationId: 'getAccount',
      tag: 'Account',
      summary: "The key's account and its limits",
      description:
        'The account the bearer key belongs to, with the limits a create and the rate limit apply (`max_batch_size`, `rate_limit_per_minute`, …).',
      success: [{ status: 200, messages: [FETCHED] }],
      data: ref('Account'),
      example: accountExample,
    },
  },
];
