// The compliance evidence's REST shapes and their mappers (one per shape): a call's dial audit and a
// batch's compliance report as routes/compliance.ts answers them, and the CSV export's `dial_audit`
// cell (the same items, from the stored entries). openapi/shapes.ts types its schemas against these.
import type { RestBatchComplianceReportQuery, RestCallDialAuditQuery } from '../codegen/graphql.ts';
import type { DialAudit } from '../domain/dial-audit.ts';

type AuditEntryIn = RestCallDialAuditQuery['call']['dialAudit'][number];
type ReportIn = RestBatchComplianceReportQuery['batch']['complianceReport'];

export interface DialAuditEntryOut {
  attempt: number;
  phone_number: string;
  alternate: boolean;
  dialled_at: string;
  allowed_by: string;
  zones: { zone: string; local_time: string }[];
  windows: { start: string; end: string; days: string[]; timezone: string }[];
  window_closes_at: string | null;
  rules: string[];
  rules_version: string | null;
  lists: string[];
}

export interface DialAuditOut {
  call_id: string;
  batch_id: string;
  items: DialAuditEntryOut[];
}

export interface ComplianceReportOut {
  batch_id: string;
  dials: number;
  unrestricted_dials: number;
  dials_without_zone: number;
  dials_by_local_hour: { zone: string; hour: number; dials: number }[];
  truncated: boolean;
  blocked: { stage: string; reason: string; calls: number }[];
}

export function dialAuditEntryOut(a: AuditEntryIn): DialAuditEntryOut {
  return {
    attempt: a.attempt,
    phone_number: a.phoneNumber,
    alternate: a.alternate,
    dialled_at: a.dialledAt,
    allowed_by: a.allowedBy.toLowerCase(),
    zones: a.zones.map((z) => ({ zone: z.zone, local_time: z.localTime })),
    windows: a.windows.map((w) => ({ start: w.start, end: w.end, days: w.days, timezone: w.timezone })),
    window_closes_at: a.windowClosesAt ?? null,
    rules: a.rules,
    rules_version: a.rulesVersion ?? null,
    lists: a.lists,
  };
}

export function complianceReportOut(batchId: string, r: ReportIn): ComplianceReportOut {
  return {
    batch_id: batchId,
    dials: r.dials,
    unrestricted_dials: r.unrestrictedDials,
    dials_without_zone: r.dialsWithoutZone,
    dials_by_local_hour: r.dialsByLocalHour.map((h) => ({ zone: h.zone, hour: h.hour, dials: h.dials })),
    truncated: r.truncated,
    blocked: r.blocked.map((b) => ({ stage: b.stage, reason: b.reason, calls: b.calls })),
  };
}

/** A call's stored entries as the dial-audit route's items (the CSV export's `dial_audit` cell). */
export function dialAuditItems(entries: readonly DialAudit[]): DialAuditEntryOut[] {
  return entries.map((a) => ({
    attempt: a.attempt,
    phone_number: a.number,
    alternate: a.alternate,
    dialled_at: a.dialledAt.toISOString(),
    allowed_by: a.allowedBy,
    zones: a.zones.map((zone, i) => ({ zone, local_time: a.localTimes[i] ?? '' })),
    windows: a.windows,
    window_closes_at: a.closesAt?.toISOString() ?? null,
    rules: a.rules,
    rules_version: a.rulesVersion,
    lists: a.lists,
  }));
}
