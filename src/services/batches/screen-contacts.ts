// The contacts of a create request, screened a chunk at a time into the calls the batch gets:
// numbers normalised (duplicates found across the whole list), the do-not-call list asked about
// the chunk's numbers, and, under calling windows, each contact placed in its window. Rejections
// gather in submission order. insertCalls asks for the next chunk while the database writes the
// previous one, so a chunk's normalising runs beside the previous chunk's COPY (bench/create-batch).
import type { ComplianceProfile } from '../../domain/compliance/rules-v1.ts';
import type { CreateBatchInput } from '../../domain/create-batch-types.ts';
import { normalizeContacts, type ContactRejection, type NormalizedContact } from '../../domain/contacts.ts';
import { effectiveWindows, type CallingWindow, type WindowOpening, type ZoneIntervals } from '../../domain/calling-window.ts';
import { placeInWindows, type CallWindowPlacement } from '../../domain/call-windows.ts';
import { numbersToCheck, withoutSuppressed } from '../../domain/suppressions.ts';
import type { SqlTx } from '../../db/sql-transaction.ts';
import { suppressedNumbers } from '../suppressions/suppressed-numbers.ts';
import { withoutRegistryRefused } from '../../domain/registry.ts';
import { registryVerdicts } from '../registry/registry-verdicts.ts';
import type { InitialCallStatus, NewCall } from './insert-calls.ts';
import { numberZoneTable } from './number-zone-table.ts';
import type { CreateWarnings } from '../../domain/create-warnings.ts';
import { rememberedZonesOf, warnDroppedAlternates, warnWindows, type WarningScreen } from './create-warnings.ts';

export interface BatchWindows {
  /** The batch's own window, else the account's default. */
  own: CallingWindow | null;
  enforced: CallingWindow | null;
}

export interface ScreenContext {
  accountId: string;
  windows: BatchWindows;
  now: Date;
  /** Contacts in the first chunk, and in each later one. */
  firstChunkSize: number;
  chunkSize: number;
  /** Where the do-not-call list is read: the create's transaction, or any connection when nothing is written. */
  lookup: SqlTx;
  /** The account exempts contacts with a consent record from the national registry (not from reassignments). */
  registryConsentExempt?: boolean;
  /** Collects the create's warnings (create-warnings.ts) when given. */
  warnings?: CreateWarnings;
  /** The compliance profiles in force for the batch (profilesInForce): their rules place calls too. */
  profiles?: readonly ComplianceProfile[];
  /**
   * Checks the contacts before index `to` that are not yet checked (their entries of
   * `input.contacts` are empty until then), throwing when one fails; absent when all were checked.
   */
  checkContactsUpTo?: (to: number) => void;
}

export interface ScreenedContacts {
  /** The accepted calls, a chunk of contacts at a time (a chunk may accept none). */
  chunks: AsyncIterable<NewCall[]>;
  /** Every rejection so far, in submission order; complete once `chunks` is done. */
  rejected: ContactRejection[];
}

export function screenContacts(input: CreateBatchInput, ctx: ScreenContext): ScreenedContacts {
  const rejected: ContactRejection[] = [];
  async function* chunks(): AsyncGenerator<NewCall[]> {
    const firstOwnerOfPhone = new Map<string, string>();
    const windows = effectiveWindows(ctx.windows.own, ctx.windows.enforced);
    const openings = new Map<string, WindowOpening | null>();
    const intervals: ZoneIntervals = new Map();
    // Placement and warnings look every number up: once per exchange block for the whole list.
    const zonesOf = rememberedZonesOf(numberZoneTable());
    const warn: WarningScreen | null = ctx.warnings
      ? { warnings: ctx.warnings, input, windows, now: ctx.now, zonesOf, openings, intervals, otherHours: new Map() }
      : null;
    for (let from = 0, size = ctx.firstChunkSize; from < input.contacts.length; from += size, size = ctx.chunkSize) {
      ctx.checkContactsUpTo?.(from + size);
      const normalized = normalizeContacts(input.contacts, {
        deduplicateByPhone: input.deduplicateByPhone,
        from,
        to: from + size,
        firstOwnerOfPhone,
      });
      const listed = await suppressedNumbers(ctx.lookup, ctx.accountId, numbersToCheck(normalized.accepted));
      if (warn) warnDroppedAlternates(warn, normalized.accepted, listed);
      const unlisted = withoutSuppressed(normalized.accepted, normalized.rejected, listed);
      // The national registry and reassigned numbers (docs/campaigns.md "National do-not-call registry").
      const allowed = withoutRegistryRefused(
        unlisted.accepted,
        unlisted.rejected,
        await registryVerdicts(ctx.lookup, unlisted.accepted),
        ctx.registryConsentExempt ?? false,
      );
      const profiles = ctx.profiles ?? [];
      const placed =
        windows.length || profiles.length
          ? placeContacts(allowed, { windows, profiles, input, now: ctx.now, openings, intervals, zonesOf })
          : { ...allowed, placements: null };
      if (warn) warnWindows(warn, placed.accepted, placed.placements, placed.rejected);
      for (const r of placed.rejected) rejected.push(r);
      // A contact's initial status: `pending` (the contract's default) until it is dialled, or
      // `queued` when the contact says so; the worker dials both.
      yield placed.accepted.map((contact, i) => ({
        contact,
        status: input.contacts[contact.index - 1].status as InitialCallStatus,
        window: placed.placements?.[i] ?? null,
      }));
    }
  }
  return { chunks: chunks(), rejected };
}

/** True when some contact would be accepted (read to the end only when none is). */
export async function acceptsAny(screened: ScreenedContacts): Promise<boolean> {
  for await (const calls of screened.chunks) if (calls.length > 0) return true;
  return false;
}

/** Under calling windows or compliance rules, each contact gets its zones and first opening. */
function placeContacts(
  allowed: { accepted: NormalizedContact[]; rejected: ContactRejection[] },
  p: {
    windows: CallingWindow[];
    profiles: readonly ComplianceProfile[];
    input: CreateBatchInput;
    now: Date;
    openings: Map<string, WindowOpening | null>;
    intervals: ZoneIntervals;
    zonesOf: (e164: string) => string[] | null;
  },
): { accepted: NormalizedContact[]; rejected: ContactRejection[]; placements: CallWindowPlacement[] } {
  return placeInWindows(allowed.accepted, allowed.rejected, {
    windows: p.windows,
    zonesOf: p.zonesOf,
    ownZone: (index) => p.input.contacts[index - 1].timezone,
    now: p.now,
    openings: p.openings,
    intervals: p.intervals,
    profiles: p.profiles,
  });
}
