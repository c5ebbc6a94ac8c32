// The batch options (domain/batch-options.ts) in the OpenAPI document: a create request field and
// a batch details field each, under their REST names.
import { BATCH_OPTION_NAMES, batchOption, type BatchOptionsOut, type BatchOptionSpec } from '../../../domain/batch-options.ts';
import { snakeCase } from '../../../domain/text-forms.ts';
import { nullable, str, type JsonSchema } from '../json-schema.ts';

function valueShape(spec: BatchOptionSpec, request: boolean): JsonSchema {
  switch (spec.kind) {
    case 'text':
      return request
        ? nullable(str(`Beside the contract: ${spec.description}. Blank reads as absent`, { maxLength: spec.maxLength }))
        : nullable(str(`Beside the contract: ${spec.description}; null: none`));
    case 'choice':
      return nullable(str(`Beside the contract: ${spec.description}`, { enum: [...spec.values] }));
  }
}

function shapes(request: boolean): Record<string, JsonSchema> {
  return Object.fromEntries(BATCH_OPTION_NAMES.map((name) => [snakeCase(name), valueShape(batchOption(name), request)]));
}

export const optionRequestShapes = (): Record<string, JsonSchema> => shapes(true);
export const optionDetailShapes = (): { [K in keyof BatchOptionsOut]: JsonSchema } => shapes(false) as { [K in keyof BatchOptionsOut]: JsonSchema };
