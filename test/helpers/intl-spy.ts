import { vi } from 'vitest';

/**
 * A spy on `new Intl.DateTimeFormat(…)` that still builds real formatters (a bare vi.spyOn of the
 * constructor returns objects without its methods). Restore it with vi.restoreAllMocks().
 */
export function spyOnFormatters() {
  const Real = Intl.DateTimeFormat;
  return vi.spyOn(Intl, 'DateTimeFormat').mockImplementation(function (locales?: string | string[], options?: Intl.DateTimeFormatOptions) {
    return new Real(locales, options);
  } as unknown as typeof Intl.DateTimeFormat);
}
