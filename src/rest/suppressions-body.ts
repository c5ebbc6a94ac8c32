// Reads POST /suppressions' JSON body into the typed variables of addSuppressions, or refuses its
// type problems in the contract's 422 form (`body.phone_numbers.3: Input should be a valid string`).
// The length is checked before the items are looked at, so a huge list costs nothing to refuse.
import { requestValidation } from '../errors.ts';
import { isPlainRecord } from '../domain/metadata.ts';
import { MAX_SUPPRESSIONS_PER_REQUEST } from '../domain/limits.ts';
import { REASON_DICT, REASON_LIST, REASON_REQUIRED, REASON_STRING } from '../domain/contact-list.ts';

export function readAddSuppressionsBody(body: unknown): { phoneNumbers: string[]; reason: string | null } {
  if (!isPlainRecord(body)) throw requestValidation([`body: ${REASON_DICT}`]);
  const details: string[] = [];
  const numbers = body.phone_numbers;
  if (numbers === undefined) details.push(`body.phone_numbers: ${REASON_REQUIRED}`);
  else if (!Array.isArray(numbers)) details.push(`body.phone_numbers: ${REASON_LIST}`);
  else if (numbers.length > MAX_SUPPRESSIONS_PER_REQUEST) {
    details.push(`body.phone_numbers: List should have at most ${MAX_SUPPRESSIONS_PER_REQUEST} items after validation, not ${numbers.length}`);
  } else {
    numbers.forEach((n, i) => {
      if (typeof n !== 'string') details.push(`body.phone_numbers.${i}: ${REASON_STRING}`);
    });
  }
  const reason = body.reason;
  if (reason !== undefined && reason !== null && typeof reason !== 'string') details.push(`body.reason: ${REASON_STRING}`);
  if (details.length) throw requestValidation(details);
  return { phoneNumbers: numbers as string[], reason: (reason as string | null | undefined) ?? null };
}
