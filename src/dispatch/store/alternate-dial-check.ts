// Whether the worker may dial a call's alternate number now (the claim checks the primary number
// itself, inside its statement): not on the account's do-not-call list nor refused by the national
// registry (registry_refuses_call), its calling windows open
// in the alternate's own zones and the contact's (dial-permission.ts), and, for an account with a
// frequency cap, under the cap. A dial the cap allows is counted here, under the account's claim
// lock, so a claim and this check never both take a number's last dial in the period.
import type { AppDeps } from '../../deps.ts';
import { FREQUENCY_CAP_SKIP } from '../../domain/frequency-cap.ts';
import { SUPPRESSED_DISCONNECT_REASON } from '../../domain/suppressions.ts';
import { runStatement } from '../../db/sql-statement.ts';
import { withSqlTransaction } from '../../db/sql-transaction.ts';
import type { CallingWindow } from '../../domain/calling-window.ts';
import { dialPermission, type FrequencyLimit } from '../../domain/dial-permission.ts';
import type { ComplianceProfile } from '../../domain/compliance/rules-v1.ts';
import { hasFrequencyRule } from '../../domain/compliance/profiles.ts';
import { checkDialFrequency } from './dial-frequency-check.ts';
import { numberZoneTable } from '../../services/batches/number-zone-table.ts';

/**
 * `ok`; why the alternate number is not dialled (`calling_window`: its windows do not open for it
 * within the horizon, or it has no zone); or, its window being closed now, the opening to wait for.
 */
export type AlternateDialCheck =
  'ok' | typeof SUPPRESSED_DISCONNECT_REASON | typeof FREQUENCY_CAP_SKIP | typeof ALTERNATE_NEVER_OPENS | { opensAt: Date; closesAt: Date };

export const ALTERNATE_NEVER_OPENS = 'calling_window';

interface CapRow {
  max_calls: number | null;
  period_seconds: number | null;
}

export async function checkAlternateDial(
  deps: Pick<AppDeps, 'db'>,
  c: {
    accountId: string;
    callId: string;
    phoneNumber: string;
    now: Date;
    windows: readonly CallingWindow[];
    profiles?: readonly ComplianceProfile[];
  },
): Promise<AlternateDialCheck> {
  const judged: { frequency: FrequencyLimit[] } = { frequency: [] };
  const check = await accountChecks(deps, c, judged);
  if (check !== 'ok' || (judged.frequency.length === 0 && !hasFrequencyRule(c.phoneNumber))) return check;
  // A compliance rule's frequency limit for the alternate's own state, after the account's cap (which counted the dial).
  const verdict = await checkDialFrequency(deps, { ...c, limits: judged.frequency });
  return verdict === 'ok' ? 'ok' : FREQUENCY_CAP_SKIP;
}

async function accountChecks(
  deps: Pick<AppDeps, 'db'>,
  c: {
    accountId: string;
    callId: string;
    phoneNumber: string;
    now: Date;
    windows: readonly CallingWindow[];
    profiles?: readonly ComplianceProfile[];
  },
  judged: { frequency: FrequencyLimit[] },
): Promise<AlternateDialCheck> {
  // One primary-key lookup each; an account without a cap needs nothing more.
  const [row] = await runStatement<CapRow & { suppressed: boolean; contact_timezone: string | null }>(
    deps.db,
    `SELECT (EXISTS (SELECT 1 FROM suppressions WHERE account_id = $1 AND phone_number = $2) OR registry_refuses_call($2, $3)) AS suppressed,
            frequency_cap_max_calls AS max_calls, frequency_cap_period_seconds AS period_seconds,
            (SELECT contact_timezone FROM calls WHERE id = $3) AS contact_timezone
       FROM accounts WHERE id = $1`,
    [c.accountId, c.phoneNumber, c.callId],
  );
  if (row?.suppressed) return SUPPRESSED_DISCONNECT_REASON;
  // Before the cap, which counts the dial: a dial not made now must not be counted.
  const permit = dialPermission(numberZoneTable(), {
    number: c.phoneNumber,
    contactZone: row?.contact_timezone ?? null,
    windows: c.windows,
    profiles: c.profiles,
    now: c.now,
  });
  judged.frequency = permit.checks.frequency;
  if (!permit.allowed) {
    return permit.reason === 'calling_window' ? { opensAt: permit.opensAt!, closesAt: permit.closesAt! } : ALTERNATE_NEVER_OPENS;
  }
  if (!row || row.max_calls === null) return 'ok';
  return withSqlTransaction(deps.db, async (tx) => {
    // The claim lock (claims hold it a few ms): waited for, not skipped.
    const [cap] = await tx.query<CapRow>(
      'SELECT frequency_cap_max_calls AS max_calls, frequency_cap_period_seconds AS period_seconds FROM accounts WHERE id = $1 FOR NO KEY UPDATE',
      [c.accountId],
    );
    if (!cap || cap.max_calls === null || cap.period_seconds === null) return 'ok';
    const now = c.now.toISOString();
    const [{ n }] = await tx.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM number_dials
        WHERE account_id = $1 AND phone_number = $2 AND dialled_at > $3::timestamptz - $4::int * interval '1 second'`,
      [c.accountId, c.phoneNumber, now, cap.period_seconds],
    );
    if (n >= cap.max_calls) return FREQUENCY_CAP_SKIP;
    await tx.query(
      'INSERT INTO number_dials (account_id, phone_number, dialled_at, call_id) VALUES ($1, $2, $3::timestamptz, $4) ON CONFLICT DO NOTHING',
      [c.accountId, c.phoneNumber, now, c.callId],
    );
    return 'ok';
  });
}
