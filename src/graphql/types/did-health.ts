// Number health of a caller-ID number (docs/campaigns.md "Number health"): its days in the rolling
// window, rates and rest, on DidNumber (read through didNumbers: the key's own numbers only); the
// operator's flag.
import { builder } from '../builder.ts';
import { rollingStats, windowStart, type DailyCounts } from '../../domain/number-health.ts';
import { flagDid } from '../../services/number-health/flag-did.ts';

interface Health {
  days: DailyCounts[];
  dials: number;
  answered: number;
  shortCalls: number;
  answerRate: number | null;
  shortCallRate: number | null;
  restedUntil: Date | null;
  restReason: string | null;
  flagged: boolean;
  flaggedReason: string | null;
}

const HealthDay = builder.objectRef<DailyCounts>('DidHealthDay').implement({
  description:
    'One UTC day of a caller-ID number: attempts that ended (dials), answered, and short (answered, talked under NUMBER_HEALTH_SHORT_CALL_SECONDS)',
  fields: (t) => ({
    day: t.exposeString('day', { description: 'YYYY-MM-DD (UTC)' }),
    dials: t.exposeInt('dials'),
    answered: t.exposeInt('answered'),
    shortCalls: t.exposeInt('shortCalls'),
  }),
});

const HealthType = builder.objectRef<Health>('DidHealth').implement({
  description: 'Rolling health over the last NUMBER_HEALTH_WINDOW_DAYS days, today included',
  fields: (t) => ({
    days: t.field({ type: [HealthDay], resolve: (h) => h.days, description: 'Days with dials, oldest first' }),
    dials: t.exposeInt('dials'),
    answered: t.exposeInt('answered'),
    shortCalls: t.exposeInt('shortCalls'),
    answerRate: t.exposeFloat('answerRate', { nullable: true, description: 'answered / dials; null without dials' }),
    shortCallRate: t.exposeFloat('shortCallRate', { nullable: true, description: 'shortCalls / answered; null without an answered call' }),
    restedUntil: t.expose('restedUntil', {
      type: 'DateTime',
      nullable: true,
      description: 'Resting (not used as caller ID) until then; null: not resting',
    }),
    restReason: t.exposeString('restReason', { nullable: true, description: '`low_answer_rate` or `flagged`; null when not resting' }),
    flagged: t.exposeBoolean('flagged', { description: 'Flagged by the operator or its provider: not used while set' }),
    flaggedReason: t.exposeString('flaggedReason', { nullable: true }),
  }),
});

const dayText = (d: Date) => d.toISOString().slice(0, 10);

builder.prismaObjectField('DidNumber', 'health', (t) =>
  t.field({
    type: HealthType,
    select: (_args, ctx) => ({
      flagged: true,
      flaggedReason: true,
      restedUntil: true,
      restReason: true,
      dailyStats: {
        where: { day: { gte: new Date(`${windowStart(ctx.deps.clock.now(), ctx.deps.config.NUMBER_HEALTH_WINDOW_DAYS)}T00:00:00Z`) } },
        orderBy: { day: 'asc' },
      },
    }),
    resolve: (did, _a, ctx) => {
      const now = ctx.deps.clock.now();
      const days = did.dailyStats.map((s) => ({ day: dayText(s.day), dials: s.dials, answered: s.answered, shortCalls: s.shortCalls }));
      const resting = did.restedUntil !== null && did.restedUntil > now;
      return {
        days,
        ...rollingStats(days, windowStart(now, ctx.deps.config.NUMBER_HEALTH_WINDOW_DAYS)),
        restedUntil: resting ? did.restedUntil : null,
        restReason: resting ? did.restReason : null,
        flagged: did.flagged,
        flaggedReason: did.flaggedReason,
      };
    },
  }),
);

builder.mutationFields((t) => ({
  adminFlagDidNumber: t.prismaField({
    type: 'DidNumber',
    description: 'Flags a caller-ID number (its provider reported it, or the operator did) or clears the flag; reason at most 200 characters',
    args: { id: t.arg.id({ required: true }), flagged: t.arg.boolean({ required: true }), reason: t.arg.string() },
    authScopes: { admin: true },
    resolve: async (query, _r, { id, flagged, reason }, ctx) => {
      const did = await flagDid(ctx.deps.db, String(id), flagged, reason ?? null, ctx.deps.clock.now());
      return ctx.deps.db.prisma.didNumber.findUniqueOrThrow({ ...query, where: { id: did.id } });
    },
  }),
}));
