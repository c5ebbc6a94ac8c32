// Compliance evidence beside the contract (issue 33): a call's dial audit and a batch's compliance
// report. Not in the contract; added beside it under the same envelope and errors. The shapes are
// in openapi/shapes.ts (DialAudit, ComplianceReport), typed against the mappers (compliance-mappers.ts).
import type { RestRoute } from '../router.ts';
import type { RestBatchComplianceReportQuery, RestCallDialAuditQuery } from '../../codegen/graphql.ts';
import { complianceReportOut, dialAuditEntryOut, type DialAuditOut } from '../compliance-mappers.ts';
import { notFound } from '../../errors.ts';
import { ref } from '../openapi/json-schema.ts';
import { complianceReportExample, dialAuditExample } from '../openapi/examples.ts';

const BASE = '/api/v1/public';

const MESSAGES = {
  audit: 'Call dial audit fetched successfully',
  report: 'Batch compliance report fetched successfully',
};

export const complianceRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: `${BASE}/call-batches/:batch_id/calls/:call_id/dial-audit`,
    operation: 'RestCallDialAudit',
    variables: ({ params }) => ({ callId: params.call_id }),
    respond: ({ call }: RestCallDialAuditQuery, { params }) => {
      // The call is read by its id under the key's account; one of another batch is not this path's.
      if (call.batchId !== params.batch_id) throw notFound('Call not found');
      return {
        message: MESSAGES.audit,
        data: { call_id: call.id, batch_id: call.batchId, items: call.dialAudit.map(dialAuditEntryOut) } satisfies DialAuditOut,
      };
    },
    doc: {
      operationId: 'getCallDialAudit',
      tag: 'Calls',
      summary: "Evidence of a call's dials: what each was checked against and why it was allowed",
      description:
        'One entry per dial, oldest first (at most 50): the zones judged with the local time in each, the windows, the compliance profile rules and the lists checked, and why the dial was allowed. Not part of the original contract; added beside it. A call of another batch or account is 404.',
      success: [{ status: 200, messages: [MESSAGES.audit] }],
      data: ref('DialAudit'),
      example: dialAuditExample,
      errors: ['NOT_FOUND'],
    },
  },
  {
    method: 'GET',
    path: `${BASE}/call-batches/:batch_id/compliance-report`,
    operation: 'RestBatchComplianceReport',
    variables: ({ params }) => ({ id: params.batch_id }),
    respond: ({ batch }: RestBatchComplianceReportQuery) => ({
      message: MESSAGES.report,
      data: complianceReportOut(batch.id, batch.complianceReport),
    }),
    doc: {
      operationId: 'getBatchComplianceReport',
      tag: 'Batches',
      summary: "A batch's dials per local hour in each zone, and its calls blocked by reason",
      description:
        'Aggregated when asked (at most 5 s; 503 past it): dials by zone and local hour (a dial judged in several zones counts in each; at most 2,400 rows, `truncated` past them) and calls held back or ended undialled by stage and reason. Not part of the original contract; added beside it.',
      success: [{ status: 200, messages: [MESSAGES.report] }],
      data: ref('ComplianceReport'),
      example: complianceReportExample,
      errors: ['NOT_FOUND'],
    },
  },
];
