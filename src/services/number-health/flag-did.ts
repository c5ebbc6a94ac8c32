// Use case: the operator flags a caller-ID number (its provider reported it, or they saw it
// themselves) or clears the flag. A flagged number is unavailable to the chooser at once; the health
// job rests it (number.rested) at its next run. Clearing ends a rest the flag caused at once: the
// next run restores it (number.restored); a rest for a low answer rate runs its course.
import type { Database } from '../../db/client.ts';
import type { DidNumber } from '../../generated/prisma/client.ts';
import { notFound, unprocessable } from '../../errors.ts';

/** Longest flag reason (characters; a CHECK in SQL). */
export const MAX_FLAG_REASON_LENGTH = 200;

export async function flagDid(db: Database, id: string, flagged: boolean, reason: string | null, now: Date): Promise<DidNumber> {
  if (reason !== null && reason.length > MAX_FLAG_REASON_LENGTH) throw unprocessable(`reason: at most ${MAX_FLAG_REASON_LENGTH} characters`);
  const found = await db.prisma.didNumber.findUnique({ where: { id } });
  if (!found) throw notFound(`DID number ${id} not found`);
  const endsFlagRest = !flagged && found.restReason === 'flagged' && found.restedUntil !== null && found.restedUntil > now;
  return db.prisma.didNumber.update({
    where: { id },
    data: { flagged, flaggedReason: flagged ? reason : null, ...(endsFlagRest ? { restedUntil: now } : {}) },
  });
}
