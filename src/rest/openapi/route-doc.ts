// What a REST route says about itself for the OpenAPI document. Every entry of the route table
// carries one (the field is required), so a new route cannot be missing from the document; paths,
// methods, path parameters and the GraphQL operation come from the route itself.
import type { ErrorCode } from '../../errors.ts';
import type { JsonSchema } from './json-schema.ts';

/** The contract's shapes, by their name under components/schemas (shapes.ts defines each). */
export type ShapeName =
  | 'Account'
  | 'Limits'
  | 'CreateBatchRequest'
  | 'IdempotentCreateBatchRequest'
  | 'Contact'
  | 'CreateResult'
  | 'ValidationError'
  | 'BatchDetails'
  | 'BatchListItem'
  | 'CallRecord'
  | 'Pagination'
  | 'DetailError'
  | 'CreateWarning'
  | 'Suppression'
  | 'AddSuppressionsRequest'
  | 'AddSuppressionsResult'
  | 'RetryPolicy'
  | 'CallingWindow'
  | 'DialAudit'
  | 'DialAuditEntry'
  | 'ComplianceReport';

export interface QueryParamDoc {
  name: string;
  description: string;
  schema: JsonSchema;
  required?: boolean;
  /** May be given more than once (`agent_id=a&agent_id=b`). */
  repeated?: boolean;
}

/** A success that is a file rather than the envelope (the CSV export). */
export interface FileAnswerDoc {
  mediaType: string;
  description: string;
  example: string;
}

export interface EnvelopeAnswerDoc {
  /** Success statuses and the envelope's `message` for each; `example` when that status's data differs from the route's. */
  success: { status: number; messages: string[]; example?: unknown }[];
  /** Schema and an example of the envelope's `data` on success. */
  data: JsonSchema;
  example: unknown;
  file?: never;
}

export type RouteDoc = RouteDocBase & (EnvelopeAnswerDoc | { file: FileAnswerDoc });

interface RouteDocBase {
  /** Unique across the table (PUT and POST create run the same GraphQL operation). */
  operationId: string;
  tag: 'Account' | 'Batches' | 'Batch operations' | 'Calls' | 'Do-not-call list';
  summary: string;
  description?: string;
  query?: QueryParamDoc[];
  /** The JSON body's shape, for routes that take one. */
  body?: { shape: ShapeName; example: unknown };
  /** Errors beyond those every route can answer (auth, rate limit, request validation, 500). */
  errors?: ErrorCode[];
  /** A detail text the route's 404 or 422 `{detail}` carries, shown as the example. */
  detailExamples?: Partial<Record<404 | 409 | 422, string>>;
}
