// Use case: create a call batch (POST, and idempotent PUT keyed by the account's idempotency_key).
// Both API surfaces land here with the domain's typed request, so the value checks, their legacy
// wording and every business rule are the same on REST and GraphQL.
import { accountProfiles, profilesInForce } from '../../domain/compliance/profiles.ts';
import { catchUpEnforcedWindow } from '../accounts/enforce-window.ts';
import type { AppDeps } from '../../deps.ts';
import { initialStatusAfterCreate, STATUS_RETURNED_BY_CREATE } from '../../domain/batch-state.ts';
import type { ContactRejection } from '../../domain/contacts.ts';
import { storedWindow } from '../../domain/calling-window.ts';
import { checkCreateBatchFields, checkCreateBatchRequest } from '../../domain/create-batch-request.ts';
import { contactCountProblem, type StartMode } from '../../domain/create-batch-fields.ts';
import type { CreateBatchInput, CreateBatchRequest } from '../../domain/create-batch-types.ts';
import { newId } from '../../domain/ids.ts';
import {
  AGENT_CANNOT_DETECT_OPT_OUTS_MESSAGE,
  CreateWarnings,
  NO_PROTECTIVE_WINDOW_MESSAGE,
  startAfterExpiryIssue,
  type CreateWarning,
} from '../../domain/create-warnings.ts';
import { canDetectOptOuts } from '../../domain/opt-out.ts';
import { allContactsInvalid, invalidFields, unprocessable } from '../../errors.ts';
import type { Account } from '../../generated/prisma/client.ts';
import { CALL_CHUNK_SIZE, FIRST_CALL_CHUNK_SIZE, insertCalls, type InsertCallsOptions } from './insert-calls.ts';
import { resolveBatchSettings, type BatchSettings } from './resolve-batch-settings.ts';
import { acceptsAny, screenContacts, type BatchWindows, type ScreenedContacts } from './screen-contacts.ts';
import { withSqlTransaction, type SqlTx } from '../../db/sql-transaction.ts';
import { validateCallbackUrl } from '../webhooks/url-safety.ts';
import { autocommit, spareConnectionOr } from '../../db/sql-statement.ts';
import type { MarkPhase } from '../../phase-timer.ts';
import { OPTION_INSERT_COLUMNS, optionParams, optionPlaceholders } from '../../db/batch-option-columns.ts';

/** The contract's Create result. */
export interface CreateBatchResult {
  batchId: string;
  agentId: string;
  versionId: string;
  status: string;
  startMode: string;
  totalContacts: number;
  acceptedContacts: number;
  rejectedContacts: number;
  validationErrors: ContactRejection[];
  /** Beside the contract's fields (domain/create-warnings.ts); kept with the batch for a replay. */
  warnings: CreateWarning[];
  concurrency: number;
  createdAt: Date;
  /** true when an existing batch was returned for a repeated idempotency key. */
  idempotent: boolean;
}

export interface CreateBatchOptions {
  /** Tuning and test seams of the bulk insert: contacts per chunk (the first one too), default CALL_CHUNK_SIZE. */
  insert?: InsertCallsOptions & { chunkSize?: number };
  /** Ends each phase of the create as it is done (the request's Server-Timing, when on). */
  mark?: MarkPhase;
}

/** With an idempotency key the request is idempotent (the contract's PUT), without one a POST. */
export async function createBatch(
  deps: AppDeps,
  account: Account,
  request: CreateBatchRequest,
  opts: CreateBatchOptions = {},
): Promise<CreateBatchResult> {
  // Counted before any contact is checked: per-contact work on a list of millions ran out of heap.
  const tooMany = contactCountProblem(request.contacts.length, account.maxBatchSize);
  if (tooMany) throw unprocessable(tooMany);
  const checkOptions = {
    maxCallDurationSeconds: account.maxCallDurationSeconds,
    now: deps.clock.now(),
    retryMinDelaySeconds: deps.config.RETRY_MIN_DELAY_SECONDS,
  };
  // With a callback_url the contacts may be screened before anything is written (a refused URL
  // yields to all of them being invalid): checked all at once first.
  if (request.callbackUrl != null) {
    const checked = checkCreateBatchRequest(request, checkOptions);
    if (!checked.ok) throw invalidFields(checked.issues);
    opts.mark?.('check');
    return createChecked(deps, account, checked.value, opts, null);
  }
  // Otherwise each chunk's contacts are checked as the chunk is screened, so that the first chunks
  // are written while the later ones are checked (a 10k-contact check is ~7 ms before the first
  // COPY otherwise). A contact that fails refuses the request in the whole check's words, and any
  // other answer waits for the check of the rest: its issues come first, as when checked first.
  const { result: checked, contacts } = checkCreateBatchFields(request, checkOptions);
  const refused = () => {
    const whole = checkCreateBatchRequest(request, checkOptions);
    return whole.ok ? new Error('A contact failed the chunked check but not the whole one') : invalidFields(whole.issues);
  };
  if (!checked.ok) throw refused();
  opts.mark?.('check');
  const rest: ContactsChecking = {
    upTo: (to) => {
      if (!contacts.upTo(to)) throw refused();
    },
    all: () => {
      if (!contacts.all()) throw refused();
    },
  };
  try {
    return await createChecked(deps, account, checked.value, opts, rest);
  } catch (e) {
    rest.all();
    throw e;
  }
}

/** The contacts' check still under way: each throws the request's refusal when a contact failed. */
interface ContactsChecking {
  upTo(to: number): void;
  all(): void;
}

async function createChecked(
  deps: AppDeps,
  account: Account,
  input: CreateBatchInput,
  opts: CreateBatchOptions,
  contacts: ContactsChecking | null,
): Promise<CreateBatchResult> {
  const mark = opts.mark;
  const late = startAfterExpiryIssue(input.startMode, input.scheduledAt, input.expiresAt);
  if (late) throw invalidFields([late]);

  // Both lookups at once. A repeated key returns the original result whatever the retry carries
  // (contacts, settings), so the settings' refusals count only when the key is new.
  const existing = input.idempotencyKey === null ? null : findByIdempotencyKey(deps, account.id, input.idempotencyKey);
  const resolved = resolveBatchSettings(deps, account, input);
  resolved.catch(() => {});
  const original = await existing;
  if (original) {
    contacts?.all();
    return original;
  }
  const settings = await resolved;
  mark?.('lookups');
  const windows = batchWindows(account, input);
  const chunkSize = Math.max(1, opts.insert?.chunkSize ?? CALL_CHUNK_SIZE[deps.db.kind]);
  const chunks = { firstChunkSize: opts.insert?.chunkSize ? chunkSize : Math.min(FIRST_CALL_CHUNK_SIZE, chunkSize), chunkSize };
  // The account's profiles (or the service default) and the batch's own: the most restrictive wins.
  const profiles = profilesInForce(accountProfiles(account) ?? deps.config.DEFAULT_COMPLIANCE_PROFILES, input.complianceProfiles);
  const screenContext = (lookup: SqlTx) => ({
    accountId: account.id,
    windows,
    now: deps.clock.now(),
    ...chunks,
    lookup,
    registryConsentExempt: account.registryConsentExempt,
    profiles,
  });
  const screen = (lookup: SqlTx) => screenContacts(input, screenContext(lookup));
  if (input.callbackUrl !== null) await validateCallbackUrlAfterContacts(deps, input.callbackUrl, () => screen(autocommit(deps.db)));

  const result: CreateBatchResult = {
    batchId: newId('batch'),
    agentId: settings.agent.id,
    versionId: settings.version.id,
    status: STATUS_RETURNED_BY_CREATE,
    startMode: input.startMode,
    totalContacts: input.contacts.length,
    acceptedContacts: 0,
    rejectedContacts: 0,
    validationErrors: [],
    warnings: [],
    concurrency: settings.concurrency,
    // Millisecond precision is what the column stores, so the replay returns the same instant.
    createdAt: deps.clock.now(),
    idempotent: false,
  };

  const inserted = await withSqlTransaction(deps.db, async (tx) => {
    // The row first, so that a concurrent request with the same key waits here, before any call.
    const rows = await tx.query(INSERT_BATCH_SQL, [
      ...batchRowParams(account, input, settings, result),
      ...windowParams(windows),
      profiles,
      ...optionParams(input.options),
    ]);
    // Another request committed this idempotency key first: write nothing, return its batch.
    if (rows.length === 0) return false;
    mark?.('batch-row');
    // The do-not-call list is read beside the COPY on a spare connection, or between two chunks'
    // COPYs in this transaction when none is free.
    const warnings = batchWarnings(windows, profiles, settings);
    const screened = screenContacts(input, { ...screenContext(spareConnectionOr(deps.db, tx)), warnings, checkContactsUpTo: contacts?.upTo });
    const owner = {
      accountId: account.id,
      batchId: result.batchId,
      agentId: result.agentId,
      promptVersionId: result.versionId,
      createdAt: result.createdAt,
    };
    const accepted = await insertCalls(tx, owner, screened.chunks, { ...opts.insert, mark });
    // Nothing was copied: the rollback costs nothing.
    if (accepted === 0) throw allContactsInvalid(screened.rejected);
    Object.assign(result, {
      acceptedContacts: accepted,
      rejectedContacts: screened.rejected.length,
      validationErrors: screened.rejected,
      warnings: warnings.list(),
    });
    await tx.query(SET_CONTACT_COUNTS_SQL, [
      result.batchId,
      accepted,
      screened.rejected.length,
      JSON.stringify(screened.rejected),
      JSON.stringify(result.warnings),
    ]);
    await catchUpEnforcedWindow(tx, result.batchId, account.id, result.createdAt);
    mark?.('counts');
    return true;
  });
  mark?.('commit');
  if (inserted) return result;

  contacts?.all();
  const winner = await findByIdempotencyKey(deps, account.id, input.idempotencyKey!);
  // The conflicting batch was committed before ON CONFLICT gave way, so it is visible now.
  if (!winner) throw new Error('Idempotency conflict without a committed batch');
  return winner;
}

/**
 * A refused callback_url, checked before anything is written; when every contact is invalid as
 * well, that is the answer (as it was when contacts were screened first).
 */
async function validateCallbackUrlAfterContacts(deps: AppDeps, url: string, screen: () => ScreenedContacts): Promise<void> {
  try {
    await validateCallbackUrl(deps, url);
  } catch (e) {
    const screened = screen();
    if (!(await acceptsAny(screened))) throw allContactsInvalid(screened.rejected);
    throw e;
  }
}

// The contact counts are known once every chunk is screened; `queued` starts at the accepted.
const SET_CONTACT_COUNTS_SQL = `
UPDATE batches SET accepted_contacts = $2, queued = $2, rejected_contacts = $3, validation_errors = $4::jsonb, create_warnings = $5::jsonb WHERE id = $1`;

const INSERT_BATCH_SQL = `
INSERT INTO batches (id, account_id, agent_id, prompt_version_id, did_number_id, status, start_mode,
                     scheduled_at, timezone, concurrency, voice, interruption, use_alternate_number,
                     recording_enabled, max_duration_seconds, deduplicate_by_phone, callback_url, metadata,
                     idempotency_key, total_contacts, accepted_contacts, rejected_contacts, validation_errors,
                     queued, created_at, updated_at, retry_max_attempts, retry_on, retry_delay_seconds, expires_at,
                     calling_window, enforced_window, compliance_profiles${OPTION_INSERT_COLUMNS})
VALUES ($1, $2, $3, $4, $5, $6, $7, $8::timestamptz, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18::jsonb,
        $19, $20, $21, $22, $23::jsonb, $21, $24::timestamptz, $24::timestamptz, $25, $26::text[], $27, $28::timestamptz,
        $29::jsonb, $30::jsonb, $31::text[]${optionPlaceholders(32)})
ON CONFLICT (account_id, idempotency_key) DO NOTHING
RETURNING id`;

function batchRowParams(account: Account, input: CreateBatchInput, s: BatchSettings, r: CreateBatchResult): unknown[] {
  return [
    r.batchId,
    account.id,
    r.agentId,
    r.versionId,
    s.didNumberId,
    initialStatusAfterCreate(input.startMode),
    input.startMode,
    input.scheduledAt.toISOString(),
    input.timezone,
    s.concurrency,
    s.voice,
    s.interruption,
    input.useAlternateNumber,
    s.recordingEnabled,
    s.maxDurationSeconds,
    input.deduplicateByPhone,
    input.callbackUrl,
    JSON.stringify(input.metadata),
    input.idempotencyKey,
    r.totalContacts,
    r.acceptedContacts, // also the initial `queued` counter: every accepted call waits to be dialled
    r.rejectedContacts,
    JSON.stringify(r.validationErrors),
    r.createdAt.toISOString(),
    input.retry?.maxAttempts ?? null,
    input.retry ? [...input.retry.on] : [],
    input.retry?.delaySeconds ?? null,
    input.expiresAt?.toISOString() ?? null,
  ];
}

function batchWindows(account: Account, input: CreateBatchInput): BatchWindows {
  return { own: input.callingWindow ?? storedWindow(account.defaultCallingWindow), enforced: storedWindow(account.enforcedCallingWindow) };
}

/** The warnings about the batch as a whole; the contacts' come from their screening. */
function batchWarnings(windows: BatchWindows, profiles: readonly string[], settings: BatchSettings): CreateWarnings {
  const warnings = new CreateWarnings();
  // A profile (us_tcpa, the service default) keeps US calls to decent hours: that protects.
  if (windows.own === null && windows.enforced === null && profiles.length === 0)
    warnings.about('no_protective_window', NO_PROTECTIVE_WINDOW_MESSAGE);
  const agent = settings.agent;
  if (!canDetectOptOuts({ key: agent.optOutOutcomeKey, detection: agent.optOutDetection })) {
    warnings.about('agent_cannot_detect_opt_outs', AGENT_CANNOT_DETECT_OPT_OUTS_MESSAGE);
  }
  return warnings;
}

function windowParams(w: BatchWindows): unknown[] {
  return [w.own && JSON.stringify(w.own), w.enforced && JSON.stringify(w.enforced)];
}

/** The original create result of the account's batch with this key, marked idempotent. */
async function findByIdempotencyKey(deps: AppDeps, accountId: string, key: string): Promise<CreateBatchResult | null> {
  const batch = await deps.db.prisma.batch.findUnique({
    where: { accountId_idempotencyKey: { accountId, idempotencyKey: key } },
    select: {
      id: true,
      agentId: true,
      promptVersionId: true,
      startMode: true,
      totalContacts: true,
      acceptedContacts: true,
      rejectedContacts: true,
      validationErrors: true,
      createWarnings: true,
      concurrency: true,
      createdAt: true,
    },
  });
  if (!batch) return null;
  return {
    batchId: batch.id,
    agentId: batch.agentId,
    versionId: batch.promptVersionId,
    // What the original create returned, whatever the batch has done since.
    status: STATUS_RETURNED_BY_CREATE,
    startMode: batch.startMode as StartMode,
    totalContacts: batch.totalContacts,
    acceptedContacts: batch.acceptedContacts,
    rejectedContacts: batch.rejectedContacts,
    validationErrors: batch.validationErrors as unknown as ContactRejection[],
    warnings: batch.createWarnings as unknown as CreateWarning[],
    concurrency: batch.concurrency,
    createdAt: batch.createdAt,
    idempotent: true,
  };
}
