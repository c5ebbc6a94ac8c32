// The contacts of a create request, screened a chunk at a time into the calls the batch gets:
// numbers normalised (duplicates found across the whole list), the do-not-call lists asked about
// the chunk's numbers (when they hold any), and, under calling windows, each contact placed in its
// window. Rejections gather in submission order. insertCalls asks for the next chunk while the
// database writes the previous one, so a chunk's screening runs beside the previous chunk's COPY
// (bench/create-batch).
import type { ComplianceProfile } from '../../domain/compliance/rules-v1.ts';
import type { CreateBatchInput } from '../../domain/create-batch-types.ts';
import { normalizeContacts, type ContactRejection, type NormalizedContact } from '../../domain/contacts.ts';
import { effectiveWindows, type CallingWindow, type WindowOpening, type ZoneIntervals } from '../../domain/calling-window.ts';
import { placeInWindows, type CallWindowPlacement } from '../../domain/call-windows.ts';
import { numbersToCheck, withoutSuppressed } from '../../domain/suppressions.ts';
import type { SqlTx } from '../../db/sql-transaction.ts';
import { suppressedNumbers } from '../suppressions/suppressed-numbers.ts';
import { withoutRegistryRefused, type RegistryVerdicts } from '../../domain/registry.ts';
import { registryVerdicts } from '../registry/registry-verdicts.ts';
import { callChunkSizes, type InitialCallStatus, type NewCall } from './insert-calls.ts';
import { numberZoneTable } from './number-zone-table.ts';
import { listsInUse, type ListsInUse } from './lists-in-use.ts';
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
    const profiles = ctx.profiles ?? [];
    /** A chunk's accepted calls, its rejections gathered, once its lists have answered. */
    const screened = (normalized: NormalizedContacts, lists: ListVerdicts): NewCall[] => {
      if (warn) warnDroppedAlternates(warn, normalized.accepted, lists.suppressed);
      const allowed = withoutRegistryRefused(lists.unlisted.accepted, lists.unlisted.rejected, lists.registry, ctx.registryConsentExempt ?? false);
      const placed =
        windows.length || profiles.length
          ? placeContacts(allowed, { windows, profiles, input, now: ctx.now, openings, intervals, zonesOf })
          : { ...allowed, placements: null };
      if (warn) warnWindows(warn, placed.accepted, placed.placements, placed.rejected);
      for (const r of placed.rejected) rejected.push(r);
      // A contact's initial status: `pending` (the contract's default) until it is dialled, or
      // `queued` when the contact says so; the worker dials both.
      return placed.accepted.map((contact, i) => ({
        contact,
        status: input.contacts[contact.index - 1].status as InitialCallStatus,
        window: placed.placements?.[i] ?? null,
      }));
    };
    // The lists are asked about each chunk after the first one chunk ahead: their answer comes
    // while the chunk before it is placed and written, instead of holding up its own screening.
    const inUse = listsInUse(ctx.lookup, ctx.accountId);
    inUse.catch(() => {});
    let ahead: { normalized: NormalizedContacts; lists: Promise<ListVerdicts> } | null = null;
    /** The newest lookup: a create that stops early waits for it, so none outlives its transaction. */
    let newest: Promise<unknown> = inUse;
    try {
      let from = 0;
      for (const size of callChunkSizes(input.contacts.length, ctx.firstChunkSize, ctx.chunkSize)) {
        ctx.checkContactsUpTo?.(from + size);
        const normalized = normalizeContacts(input.contacts, {
          deduplicateByPhone: input.deduplicateByPhone,
          from,
          to: from + size,
          firstOwnerOfPhone,
        });
        const lists = askLists(ctx, inUse, normalized);
        lists.catch(() => {});
        newest = lists;
        // The first chunk goes at once: the database waits for it.
        if (from === 0) yield screened(normalized, await lists);
        else {
          if (ahead) yield screened(ahead.normalized, await ahead.lists);
          ahead = { normalized, lists };
        }
        from += size;
      }
      if (ahead) yield screened(ahead.normalized, await ahead.lists);
    } finally {
      await newest.then(noop, noop);
    }
  }
  return { chunks: chunks(), rejected };
}

type NormalizedContacts = ReturnType<typeof normalizeContacts>;

const noop = () => {};

/** What the account's do-not-call list and the national registry say about a chunk's numbers. */
interface ListVerdicts {
  suppressed: Set<string>;
  /** The chunk without its suppressed contacts and numbers. */
  unlisted: { accepted: NormalizedContact[]; rejected: ContactRejection[] };
  registry: RegistryVerdicts;
}

const NOT_LISTED: RegistryVerdicts = { listed: new Set(), reassigned: new Set() };

async function askLists(ctx: ScreenContext, inUse: Promise<ListsInUse>, normalized: NormalizedContacts): Promise<ListVerdicts> {
  const lists = await inUse;
  const suppressed = lists.suppressions ? await suppressedNumbers(ctx.lookup, ctx.accountId, numbersToCheck(normalized.accepted)) : new Set<string>();
  const unlisted = withoutSuppressed(normalized.accepted, normalized.rejected, suppressed);
  // The national registry and reassigned numbers (docs/campaigns.md "National do-not-call registry").
  return { suppressed, unlisted, registry: lists.registry ? await registryVerdicts(ctx.lookup, unlisted.accepted) : NOT_LISTED };
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
