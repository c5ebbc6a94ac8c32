// The batch options' columns (domain/batch-options.ts) in the statements that write and read whole
// batches; each column is the option's name in snake_case, as schema.prisma maps it.
import { BATCH_OPTION_NAMES, batchOption, type BatchOptions, type BatchOptionSpec } from '../domain/batch-options.ts';
import { snakeCase } from '../domain/text-forms.ts';

function sqlType(spec: BatchOptionSpec): string {
  switch (spec.kind) {
    case 'text':
    case 'choice':
      return 'text';
  }
}

/** `, "label"`: the columns an INSERT lists after its own. */
export const OPTION_INSERT_COLUMNS = BATCH_OPTION_NAMES.map((name) => `, "${snakeCase(name)}"`).join('');

/** `, $32::text`: their placeholders, numbered from `first`. */
export function optionPlaceholders(first: number): string {
  return BATCH_OPTION_NAMES.map((name, i) => `, $${first + i}::${sqlType(batchOption(name))}`).join('');
}

/** Their values, in the placeholders' order. */
export function optionParams(options: BatchOptions): unknown[] {
  return BATCH_OPTION_NAMES.map((name) => options[name]);
}

/** `, b."label" AS "label"`: a SELECT's entries for them, keyed by option name. */
export function optionSelectList(alias: string): string {
  return BATCH_OPTION_NAMES.map((name) => `, ${alias}."${snakeCase(name)}" AS "${name}"`).join('');
}
