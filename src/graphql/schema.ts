import { lexicographicSortSchema, printSchema } from 'graphql';
import { builder } from './builder.ts';
import { withoutOwnPropertyResolvers } from './plain-reads.ts';
import './scalars.ts';
import './types/account.ts';
import './types/catalog.ts';
import './types/did-health.ts';
import './types/batch.ts';
import './types/batch-options.ts';
import './types/call.ts';
import './types/batch-operations.ts';
import './types/batch-create.ts';
import './types/batch-queries.ts';
import './types/webhooks.ts';
import './types/subscriptions.ts';
import './types/provider.ts';
import './types/suppressions.ts';
import './types/compliance.ts';

export const schema = withoutOwnPropertyResolvers(builder.toSchema());

export function printedSchema(): string {
  return printSchema(lexicographicSortSchema(schema)) + '\n';
}
