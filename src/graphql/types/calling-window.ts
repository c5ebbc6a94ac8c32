// Calling windows on the GraphQL surface: the batch's and the account's (default and enforced).
import { builder } from '../builder.ts';
import { OPENING_HORIZON_DAYS, WEEKDAYS, type CallingWindow } from '../../domain/calling-window.ts';

export const WeekdayEnum = builder.enumType('Weekday', { values: WEEKDAYS });

export const CallingWindowInput = builder.inputType('CallingWindowInput', {
  description: 'Local hours and days in which calls are placed (docs/campaigns.md)',
  fields: (t) => ({
    start: t.string({ required: true, description: 'Local HH:MM, inclusive' }),
    end: t.string({ required: true, description: 'Local HH:MM, exclusive; after start (no overnight windows); 24:00 is the end of the day' }),
    days: t.field({ type: [WeekdayEnum], description: 'Default every day' }),
    timezone: t.string({
      description: `An IANA zone, or "recipient" (the default): every zone that can apply to the number dialled (its prefix zones, every zone of its area code for an unlisted exchange, and the contact's own timezone) must be open. A window that does not open within ${OPENING_HORIZON_DAYS} days for a contact rejects that contact.`,
    }),
  }),
});

export const CallingWindowType = builder.objectRef<CallingWindow>('CallingWindow').implement({
  description: 'Local hours and days in which calls are placed (docs/campaigns.md)',
  fields: (t) => ({
    start: t.exposeString('start', { description: 'Local HH:MM, inclusive' }),
    end: t.exposeString('end', { description: 'Local HH:MM, exclusive; 24:00 is the end of the day' }),
    days: t.field({ type: [WeekdayEnum], resolve: (w) => [...w.days] }),
    timezone: t.exposeString('timezone', { description: 'An IANA zone, or "recipient"' }),
  }),
});
