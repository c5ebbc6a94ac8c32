// A batch's options beside the contract: settings a create may give and every read shows, each
// described once here. The create input (GraphQL and REST), its checks, the stored column, the
// OpenAPI shapes, batch details (GraphQL, REST, webhooks) all loop over this table, so a new option
// is one entry here plus its column (docs/development.md "Adding a batch column").
import { snakeCase, type SnakeCase } from './text-forms.ts';

/** Free text, trimmed of nothing; blank reads as not given (null). */
export interface TextOption {
  kind: 'text';
  maxLength: number;
  description: string;
  /** Shown in the OpenAPI document's examples. */
  example: string;
}

/** One of a fixed list of words; absent reads as not given (null). */
export interface ChoiceOption<V extends string = string> {
  kind: 'choice';
  values: readonly V[];
  /** The GraphQL enum type its values form. */
  enumName: string;
  description: string;
  example: V;
}

/** The kinds an option can be; a new kind is a case in each surface's switch. */
export type BatchOptionSpec = TextOption | ChoiceOption;

export const BATCH_OPTIONS = {
  label: {
    kind: 'text',
    maxLength: 200,
    description: 'A name for people to know the batch by (dashboard, batch details, webhooks); not unique, not used for dispatch',
    example: 'Spring renewals, west',
  },
  voicemail: {
    kind: 'choice',
    values: ['hangup', 'leave_message'],
    enumName: 'CallBatchVoicemail',
    description: "What a call that reaches voicemail does: hang up, or leave voicemail_message; absent: the provider's or agent's own behaviour",
    example: 'leave_message',
  },
  voicemailMessage: {
    kind: 'text',
    maxLength: 1_000,
    description: "The message the provider's voice reads onto the voicemail; required with voicemail leave_message, refused otherwise",
    example: 'Hello, this is Acme calling about your renewal. Please call us back at 555 0100.',
  },
} as const satisfies Record<string, BatchOptionSpec>;

export type BatchOptionName = keyof typeof BATCH_OPTIONS;

/** The names in the table's order, which is the order every surface lists them in. */
export const BATCH_OPTION_NAMES = Object.keys(BATCH_OPTIONS) as BatchOptionName[];

type ValueOf<S extends BatchOptionSpec> = S extends TextOption ? string | null : S extends ChoiceOption<infer V> ? V | null : never;

/** The options as checked and stored: every one present, null where not given. */
export type BatchOptions = { [K in BatchOptionName]: ValueOf<(typeof BATCH_OPTIONS)[K]> };

/** The options as a create request gives them: any may be absent. */
export type BatchOptionsRequest = { [K in BatchOptionName]?: ValueOf<(typeof BATCH_OPTIONS)[K]> };

export function batchOption(name: BatchOptionName): BatchOptionSpec {
  return BATCH_OPTIONS[name];
}

/** The options under their REST (and column) names. */
export type BatchOptionsOut = { [K in BatchOptionName as SnakeCase<K>]: BatchOptions[K] };

export const BATCH_OPTION_REST_NAMES = BATCH_OPTION_NAMES.map((name) => snakeCase(name));

/** Each option's example under its REST name. */
export function batchOptionExamples(): BatchOptionsOut {
  return batchOptionsOut(Object.fromEntries(BATCH_OPTION_NAMES.map((name) => [name, BATCH_OPTIONS[name].example])) as BatchOptions);
}

const NAME_PAIRS = BATCH_OPTION_NAMES.map((name, i) => [name, BATCH_OPTION_REST_NAMES[i]] as const);

/** The options of a batch read in GraphQL names, under their REST names (batch details are a hot read). */
export function batchOptionsOut(source: BatchOptions): BatchOptionsOut {
  const out: Record<string, unknown> = {};
  for (const [name, rest] of NAME_PAIRS) out[rest] = source[name] ?? null;
  return out as BatchOptionsOut;
}
