import type { RestRoute } from '../router.ts';
import type { RestMeQuery } from '../../codegen/graphql.ts';

export const accountRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/api/v1/public/me',
    operation: 'RestMe',
    respond: (data: RestMeQuery) => ({
      message: 'Account details fetched successfully',
      data: {
        account_id: data.me.id,
        name: data.me.name,
        email: data.me.email,
        limits: {
          max_batch_size: data.me.limits.maxBatchSize,
          max_concurrent_calls: data.me.limits.maxConcurrentCalls,
          max_call_duration_seconds: data.me.limits.maxCallDurationSeconds,
          rate_limit_per_minute: data.me.limits.rateLimitPerMinute,
        },
      },
    }),
  },
];
