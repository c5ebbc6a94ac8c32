// Compliance evidence on the graph: each call's dial audit (Call.dialAudit) and a batch's compliance
// report (CallBatch.complianceReport). docs/campaigns.md "Dial audit" and "Compliance report".
import { builder } from '../builder.ts';
import { AppError } from '../../errors.ts';
import { CallType } from './call.ts';
import { CallBatchType } from './batch.ts';
import {
  MAX_AUDIT_ENTRIES_PER_CALL,
  type DialAllowedBy as DialAllowedByValue,
  type DialAudit,
  type DialAuditWindow,
} from '../../domain/dial-audit.ts';
import {
  BLOCKED_REASONS_DESCRIPTION,
  complianceReport,
  MAX_REPORT_BLOCKED_ROWS,
  MAX_REPORT_HOUR_ROWS,
  type BlockedCount,
  type ComplianceReport,
  type LocalHourDials,
} from '../../services/batches/compliance-report.ts';

const DialAllowedBy = builder.enumType('DialAllowedBy', {
  description: 'Why a dial was allowed',
  values: {
    WINDOW_OPEN: { value: 'window_open', description: 'Every window and every profile hours rule was open in every zone judged' },
    NO_WINDOW: { value: 'no_window', description: 'No window and no hours rule applied: nothing limited the hour' },
    CLAIM_WINDOW: {
      value: 'claim_window',
      description: 'Placed by the claim on the window stored with the call while the check at the dial found it closed (evidence to look at)',
    },
  } satisfies Record<string, { value: DialAllowedByValue; description: string }>,
});

const DialAuditZoneType = builder.objectRef<{ zone: string; localTime: string }>('DialAuditZone').implement({
  description: 'A zone a dial was judged in, with its local time at the dial',
  fields: (t) => ({
    zone: t.exposeString('zone', { description: 'IANA zone' }),
    localTime: t.exposeString('localTime', { description: 'ISO 8601 local time in the zone, with its offset' }),
  }),
});

const DialAuditWindowType = builder.objectRef<DialAuditWindow>('DialAuditWindow').implement({
  description: 'A calling window a dial was checked against',
  fields: (t) => ({
    start: t.exposeString('start'),
    end: t.exposeString('end'),
    days: t.exposeStringList('days'),
    timezone: t.exposeString('timezone', { description: 'An IANA zone, or `recipient`' }),
  }),
});

export const DialAuditType = builder.objectRef<DialAudit>('DialAudit').implement({
  description: 'Evidence of one dial: what it was checked against and why it was allowed (written by the worker as it dialled)',
  fields: (t) => ({
    attempt: t.exposeInt('attempt', { description: "1-based: the call's dial count with this dial" }),
    phoneNumber: t.exposeString('number', { description: 'The number dialled (E.164)' }),
    alternate: t.exposeBoolean('alternate'),
    dialledAt: t.expose('dialledAt', { type: 'DateTime' }),
    allowedBy: t.field({ type: DialAllowedBy, resolve: (a) => a.allowedBy }),
    zones: t.field({
      type: [DialAuditZoneType],
      description: "Every zone judged: the number's, the contact's and any a window names (without a window: the number's own)",
      resolve: (a) => a.zones.map((zone, i) => ({ zone, localTime: a.localTimes[i] ?? '' })),
    }),
    windows: t.field({ type: [DialAuditWindowType], resolve: (a) => a.windows }),
    windowClosesAt: t.expose('closesAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When the window the dial was placed in closes; null without a window',
    }),
    rules: t.exposeStringList('rules', { description: 'Compliance profile rule ids applied; empty when no profile is in force' }),
    rulesVersion: t.exposeString('rulesVersion', { nullable: true, description: "The rule table's version when a profile was in force" }),
    lists: t.exposeStringList('lists', {
      description:
        'Lists the number was checked against: `account_do_not_call`, and for a +1 number `us_national_dnc_registry` and `us_reassigned_numbers`',
    }),
  }),
});

builder.objectField(CallType, 'dialAudit', (t) =>
  t.field({
    type: [DialAuditType],
    description: `Evidence of each of the call's dials, oldest first (at most ${MAX_AUDIT_ENTRIES_PER_CALL})`,
    resolve: (c, _a, ctx) => ctx.loaders.dialAudits.load(c.id),
  }),
);

const LocalHourDialsType = builder.objectRef<LocalHourDials>('LocalHourDials').implement({
  fields: (t) => ({
    zone: t.exposeString('zone'),
    hour: t.exposeInt('hour', { description: 'Local hour in the zone at the dial, 0-23' }),
    dials: t.exposeInt('dials'),
  }),
});

const BlockedCountType = builder.objectRef<BlockedCount>('BlockedDials').implement({
  description: 'Calls held back or ended undialled for one reason',
  fields: (t) => ({
    stage: t.exposeString('stage', {
      description:
        '`ended` (ended undialled), `waiting` (held back now), `withheld` (a claimed dial the check at the dial refused) or `alternate` (its alternate number was not dialled)',
    }),
    reason: t.exposeString('reason', {
      description: BLOCKED_REASONS_DESCRIPTION,
    }),
    calls: t.exposeInt('calls'),
  }),
});

const ComplianceReportType = builder.objectRef<ComplianceReport>('ComplianceReport').implement({
  description: "A batch's dials per local hour in each zone, and its calls blocked by reason (docs/campaigns.md)",
  fields: (t) => ({
    dials: t.exposeInt('dials', { description: 'Dials recorded' }),
    unrestrictedDials: t.exposeInt('unrestrictedDials', { description: 'Dials made without any calling window' }),
    dialsWithoutZone: t.exposeInt('dialsWithoutZone', { description: 'Dials with no zone to place them in' }),
    dialsByLocalHour: t.field({
      type: [LocalHourDialsType],
      description: `By zone and local hour (a dial judged in several zones counts in each); at most ${MAX_REPORT_HOUR_ROWS} rows`,
      resolve: (r) => r.dialsByLocalHour,
    }),
    truncated: t.exposeBoolean('truncated', { description: 'dialsByLocalHour left rows out' }),
    blocked: t.field({ type: [BlockedCountType], description: `At most ${MAX_REPORT_BLOCKED_ROWS} rows`, resolve: (r) => r.blocked }),
  }),
});

/** The report aggregates every dial and waiting call of the batch: priced like outcomeBreakdown. */
const COMPLIANCE_REPORT_COMPLEXITY = 2_000;

builder.objectField(CallBatchType, 'complianceReport', (t) =>
  t.field({
    type: ComplianceReportType,
    description: 'Dials per local hour per zone and blocked calls by reason, aggregated now; not in subscriptions',
    complexity: COMPLIANCE_REPORT_COMPLEXITY,
    resolve: (batch, _a, ctx, info) => {
      if (info.operation.operation === 'subscription')
        throw new AppError('BAD_REQUEST', 'complianceReport is not available in subscriptions; query it instead');
      return complianceReport(ctx.deps, batch.id);
    },
  }),
);
