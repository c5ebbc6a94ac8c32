// The batch options (domain/batch-options.ts) on the GraphQL surface: a create input field and a
// CallBatch field each, both made from the option's entry.
import type { FieldRef, InputFieldRef } from '@pothos/core';
import { builder } from '../builder.ts';
import { BATCH_OPTION_NAMES, batchOption, type BatchOptionName, type BatchOptionSpec } from '../../domain/batch-options.ts';
import { CallBatchType } from './batch.ts';
import { withBatchColumns } from './batch-columns.ts';

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;
type InputFields = PothosSchemaTypes.InputFieldBuilder<Types, 'InputObject'>;

/** The create input's option fields, spread into CreateCallBatchInput. */
export function batchOptionInputFields(t: InputFields): Record<BatchOptionName, InputFieldRef<Types, string | null | undefined>> {
  const fields = {} as Record<BatchOptionName, InputFieldRef<Types, string | null | undefined>>;
  for (const name of BATCH_OPTION_NAMES) fields[name] = inputField(t, batchOption(name));
  return fields;
}

function inputField(t: InputFields, spec: BatchOptionSpec) {
  switch (spec.kind) {
    case 'text':
      return t.string({ description: `${spec.description}. At most ${spec.maxLength} characters; blank: none` });
  }
}

// Read like the other detail columns (batch-columns.ts): batch details has them, a list reads them with its page.
builder.objectFields(CallBatchType, (t) => {
  const fields: Record<string, FieldRef<Types, string | null | undefined, 'Object'>> = {};
  for (const name of BATCH_OPTION_NAMES) {
    const spec = batchOption(name);
    switch (spec.kind) {
      case 'text':
        fields[name] = t.string({
          nullable: true,
          description: `${spec.description}; null: none`,
          resolve: (b, _a, ctx) => withBatchColumns(b, [name], ctx, (r) => r[name]),
        });
    }
  }
  return fields;
});
