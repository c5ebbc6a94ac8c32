// The frequency limits of the compliance rules that bind a number (dial-permission.ts: e.g. at most
// 3 calls in 24 hours to a Florida number), counted with the frequency cap's own record of dials
// (number_dials, frequency-cap.ts) at dial time: the claim counts only the account's own cap. Under
// the account's claim lock, so two dials of one number (a claim elsewhere, another worker's check)
// never both take its last dial in the period. An allowed dial is recorded here (once: the claim
// may have recorded it already); a refused one takes back the claim's record of a dial not made.
// With no limits (a batch without the rule's profile) the dial of a rule-bound number is only recorded.
import type { AppDeps } from '../../deps.ts';
import type { FrequencyLimit } from '../../domain/dial-permission.ts';
import { withSqlTransaction } from '../../db/sql-transaction.ts';
import { runStatement } from '../../db/sql-statement.ts';

const RECORD_DIAL =
  'INSERT INTO number_dials (account_id, phone_number, dialled_at, call_id) VALUES ($1, $2, $3::timestamptz, $4) ON CONFLICT DO NOTHING';

/** `ok`, or when enough dials leave the period for this one to be made. */
export type FrequencyVerdict = 'ok' | { until: Date; rule: string };

export async function checkDialFrequency(
  deps: Pick<AppDeps, 'db'>,
  c: { accountId: string; callId: string; phoneNumber: string; now: Date; limits: readonly FrequencyLimit[] },
): Promise<FrequencyVerdict> {
  const now = c.now.toISOString();
  if (c.limits.length === 0) {
    // No limit binds this batch, but one may bind another batch's dial of the number: recorded.
    await runStatement(deps.db, RECORD_DIAL, [c.accountId, c.phoneNumber, now, c.callId]);
    return 'ok';
  }
  const longest = Math.max(...c.limits.map((l) => l.periodSeconds));
  return withSqlTransaction(deps.db, async (tx) => {
    // The claim lock (claims hold it a few ms): waited for, not skipped.
    await tx.query('SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE', [c.accountId]);
    // The number's dials in the longest period, newest first, but this very dial (the claim's record of it).
    const rows = await tx.query<{ at: Date }>(
      `SELECT dialled_at AS at FROM number_dials
        WHERE account_id = $1 AND phone_number = $2 AND dialled_at > $3::timestamptz - $4::int * interval '1 second'
          AND NOT (call_id = $5 AND dialled_at = $3::timestamptz)
        ORDER BY dialled_at DESC`,
      [c.accountId, c.phoneNumber, now, longest, c.callId],
    );
    const dials = rows.map((r) => new Date(r.at).getTime());
    let until: { until: Date; rule: string } | null = null;
    for (const l of c.limits) {
      const inPeriod = dials.filter((t) => t > c.now.getTime() - l.periodSeconds * 1000);
      if (inPeriod.length < l.maxCalls) continue;
      // Free again when the maxCalls-th newest dial leaves the period.
      const at = new Date(inPeriod[l.maxCalls - 1] + l.periodSeconds * 1000);
      if (!until || at > until.until) until = { until: at, rule: l.rule };
    }
    if (until) {
      await tx.query('DELETE FROM number_dials WHERE account_id = $1 AND phone_number = $2 AND dialled_at = $3::timestamptz AND call_id = $4', [
        c.accountId,
        c.phoneNumber,
        now,
        c.callId,
      ]);
      return until;
    }
    await tx.query(RECORD_DIAL, [c.accountId, c.phoneNumber, now, c.callId]);
    return 'ok';
  });
}
