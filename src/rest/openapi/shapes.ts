// The contract's shapes as JSON Schema, one per shape, each typed against the output of the one
// mapper that produces it (services/representations.ts, the routes' own mappers): a field added,
// renamed or dropped there does not compile until its schema here follows. One module per
// area under shapes/; this table names them as components/schemas lists them.
import type { ShapeName } from './route-doc.ts';
import type { JsonSchema } from './json-schema.ts';
import { account, limits } from './shapes/account.ts';
import { addSuppressionsRequest, addSuppressionsResult, suppression } from './shapes/suppressions.ts';
import { batchDetails, batchListItem, callingWindow, retryPolicy } from './shapes/batch.ts';
import { callRecord } from './shapes/call.ts';
import { complianceReport, dialAudit, dialAuditEntry } from './shapes/compliance.ts';
import { contact, createRequest, createResult, createWarning, idempotentCreateRequest, validationError } from './shapes/create.ts';
import { detailError, pagination } from './shapes/envelope.ts';

export const SHAPES: Record<ShapeName, JsonSchema> = {
  Account: account,
  Limits: limits,
  CreateBatchRequest: createRequest,
  IdempotentCreateBatchRequest: idempotentCreateRequest,
  Contact: contact,
  CreateResult: createResult,
  ValidationError: validationError,
  BatchDetails: batchDetails,
  BatchListItem: batchListItem,
  CallRecord: callRecord,
  Pagination: pagination,
  DetailError: detailError,
  CreateWarning: createWarning,
  Suppression: suppression,
  AddSuppressionsRequest: addSuppressionsRequest,
  AddSuppressionsResult: addSuppressionsResult,
  RetryPolicy: retryPolicy,
  CallingWindow: callingWindow,
  DialAudit: dialAudit,
  DialAuditEntry: dialAuditEntry,
  ComplianceReport: complianceReport,
};
