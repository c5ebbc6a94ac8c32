// The batch options (domain/batch-options.ts) on the GraphQL surface: a create input field and a
// CallBatch field each, both made from the option's entry.
import type { EnumRef, FieldRef, InputFieldRef } from '@pothos/core';
import { builder } from '../builder.ts';
import {
  BATCH_OPTION_NAMES,
  batchOption,
  type BatchOptionName,
  type BatchOptionsRequest,
  type BatchOptionSpec,
  type ChoiceOption,
} from '../../domain/batch-options.ts';
import { CallBatchType } from './batch.ts';
import { withBatchColumns } from './batch-columns.ts';

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;
type InputFields = PothosSchemaTypes.InputFieldBuilder<Types, 'InputObject'>;

// One enum type per choice option, made once as the schema is built, shared by its input and its output field.
const CHOICE_ENUMS: ReadonlyMap<string, EnumRef<Types, string, string>> = new Map(
  BATCH_OPTION_NAMES.map((name) => batchOption(name))
    .filter((spec): spec is ChoiceOption => spec.kind === 'choice')
    .map((spec) => [
      spec.enumName,
      builder.enumType(spec.enumName, { description: spec.description, values: spec.values }) as EnumRef<Types, string, string>,
    ]),
);

const choiceEnum = (spec: ChoiceOption): EnumRef<Types, string, string> => CHOICE_ENUMS.get(spec.enumName)!;

/** The create input's option fields, spread into CreateCallBatchInput; a choice's enum holds it to its values. */
export function batchOptionInputFields(t: InputFields): { [K in BatchOptionName]: InputFieldRef<Types, BatchOptionsRequest[K]> } {
  const fields = {} as Record<BatchOptionName, InputFieldRef<Types, string | null | undefined>>;
  for (const name of BATCH_OPTION_NAMES) fields[name] = inputField(t, batchOption(name));
  return fields as { [K in BatchOptionName]: InputFieldRef<Types, BatchOptionsRequest[K]> };
}

function inputField(t: InputFields, spec: BatchOptionSpec): InputFieldRef<Types, string | null | undefined> {
  switch (spec.kind) {
    case 'text':
      return t.string({ description: `${spec.description}. At most ${spec.maxLength} characters; blank: none` });
    case 'choice':
      return t.field({ type: choiceEnum(spec), description: `${spec.description}; null: none` });
  }
}

// Read like the other detail columns (batch-columns.ts): batch details has them, a list reads them with its page.
builder.objectFields(CallBatchType, (t) => {
  const fields: Record<string, FieldRef<Types, string | null | undefined, 'Object'>> = {};
  for (const name of BATCH_OPTION_NAMES) {
    const spec = batchOption(name);
    const resolve = (b: Parameters<typeof withBatchColumns>[0], _a: unknown, ctx: Parameters<typeof withBatchColumns>[2]) =>
      withBatchColumns(b, [name], ctx, (r) => r[name]);
    switch (spec.kind) {
      case 'text':
        fields[name] = t.string({ nullable: true, description: `${spec.description}; null: none`, resolve });
        break;
      case 'choice':
        fields[name] = t.field({ type: choiceEnum(spec), nullable: true, description: `${spec.description}; null: none`, resolve });
    }
  }
  return fields;
});
