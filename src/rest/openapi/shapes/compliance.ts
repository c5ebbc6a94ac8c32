// A call's dial audit and a batch's compliance report, typed against compliance-mappers.ts.
import { DIAL_ALLOWED_BY } from '../../../domain/dial-audit.ts';
import { BLOCKED_REASONS_DESCRIPTION, BLOCKED_STAGES } from '../../../services/batches/compliance-report.ts';
import type { ComplianceReportOut, DialAuditEntryOut, DialAuditOut } from '../../compliance-mappers.ts';
import { bool, closed, count, int, nullable, oneOfStrings, ref, str, timestamp } from '../json-schema.ts';
import { batchId } from './fields.ts';

export const dialAuditEntry = closed<DialAuditEntryOut>({
  attempt: int("1-based: the call's dial count with this dial", { minimum: 1 }),
  phone_number: str('The number dialled (E.164)'),
  alternate: bool("Whether the contact's alternate number was dialled"),
  dialled_at: timestamp(),
  allowed_by: oneOfStrings(DIAL_ALLOWED_BY, '`window_open`: every window open in every zone judged; `no_window`: no window set'),
  zones: {
    type: 'array',
    description: "Every zone judged (the number's, the contact's, any a window names), with the local time there at the dial",
    items: closed<DialAuditEntryOut['zones'][number]>({ zone: str('IANA zone'), local_time: str('ISO 8601 local time with its offset') }),
  },
  windows: { type: 'array', description: 'The calling windows checked', items: ref('CallingWindow') },
  window_closes_at: nullable(timestamp('When the window the dial was placed in closes; null without a window')),
  rules: { type: 'array', items: str(), description: 'Compliance profile rule ids applied' },
  rules_version: nullable(str("The rule table's version when a profile was in force")),
  lists: { type: 'array', items: str(), description: 'Lists the number was checked against' },
});

export const dialAudit = closed<DialAuditOut>({
  call_id: str('Call id, `call_<id>`', { pattern: '^call_' }),
  batch_id: batchId,
  items: { type: 'array', maxItems: 50, items: ref('DialAuditEntry'), description: 'Oldest first' },
});

export const complianceReport = closed<ComplianceReportOut>({
  batch_id: batchId,
  dials: count('Dials recorded'),
  unrestricted_dials: count('Dials made without any calling window'),
  dials_without_zone: count('Dials with no zone to place them in'),
  dials_by_local_hour: {
    type: 'array',
    maxItems: 2400,
    description: 'By zone and local hour; a dial judged in several zones counts in each',
    items: closed<ComplianceReportOut['dials_by_local_hour'][number]>({
      zone: str('IANA zone'),
      hour: int('Local hour, 0-23', { minimum: 0, maximum: 23 }),
      dials: count(),
    }),
  },
  truncated: bool('dials_by_local_hour left rows out'),
  blocked: {
    type: 'array',
    maxItems: 50,
    description: 'Calls held back or ended undialled',
    items: closed<ComplianceReportOut['blocked'][number]>({
      stage: oneOfStrings(
        BLOCKED_STAGES,
        '`ended` undialled, `waiting` held back now, `withheld` a claimed dial refused at the dial, `alternate` number not dialled',
      ),
      reason: str(BLOCKED_REASONS_DESCRIPTION),
      calls: count(),
    }),
  },
});
