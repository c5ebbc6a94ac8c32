// The operator's tokens (ADMIN_TOKEN, METRICS_TOKEN), compared in constant time (hashes first, so
// lengths leak nothing).
import crypto from 'node:crypto';
import type { AppDeps } from '../../deps.ts';

function safeEqual(a: string, b: string): boolean {
  const ha = crypto.createHash('sha256').update(a).digest();
  const hb = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(ha, hb);
}

export function isAdminToken(deps: Pick<AppDeps, 'config'>, token: string | null): boolean {
  return !!(token && deps.config.ADMIN_TOKEN && safeEqual(token, deps.config.ADMIN_TOKEN));
}

/** The metrics token only: /metrics refuses the admin token. */
export function isMetricsToken(deps: Pick<AppDeps, 'config'>, token: string | null): boolean {
  return !!(token && deps.config.METRICS_TOKEN && safeEqual(token, deps.config.METRICS_TOKEN));
}
