// A calling window written on the command line: `09:00-20:00 [DAYS] [ZONE]`, e.g.
// `09:00-20:00 mon-fri recipient` or `10:00-18:00 sat,sun Europe/Berlin`; `none` clears one.
// The server checks the values; this only splits the text.
const DAY_ORDER = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

export interface WindowSpec {
  start: string;
  end: string;
  days?: string[];
  timezone?: string;
}

export function parseWindowSpec(text: string): WindowSpec | null {
  if (text.trim() === 'none') return null;
  const [hours, ...rest] = text.trim().split(/\s+/);
  const m = /^(\d{1,2}:\d{2})-(\d{1,2}:\d{2})$/.exec(hours ?? '');
  if (!m) throw new Error(`calling window "${text}": expected HH:MM-HH:MM [DAYS] [ZONE], e.g. "09:00-20:00 mon-fri recipient", or none`);
  const spec: WindowSpec = { start: m[1].padStart(5, '0'), end: m[2].padStart(5, '0') };
  for (const part of rest) {
    if (/^[a-z]{3}([-,][a-z]{3})*$/.test(part) && DAY_ORDER.includes(part.slice(0, 3))) spec.days = days(part);
    else spec.timezone = part;
  }
  return spec;
}

/** `mon-fri`, `sat,sun` or `mon,wed-fri` -> the days named. */
function days(text: string): string[] {
  return text.split(',').flatMap((part) => {
    const [from, to] = part.split('-');
    if (to === undefined) return [from];
    const a = DAY_ORDER.indexOf(from);
    const b = DAY_ORDER.indexOf(to);
    if (a < 0 || b < a) throw new Error(`calling window days "${part}": expected a range such as mon-fri`);
    return DAY_ORDER.slice(a, b + 1);
  });
}
