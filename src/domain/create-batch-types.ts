// The create request as the surfaces hand it to the domain (well-typed values, or a draft with the
// refused ones left out), and the checked input the use case writes.
import type { ConsentRecord, ConsentRequest } from './consent.ts';
import type { CallingWindow } from './calling-window.ts';
import type { ComplianceProfile } from './compliance/rules-v1.ts';
import type { RetryPolicy } from './retry-policy.ts';
import type { ContactStatus, StartMode } from './create-batch-fields.ts';
import type { BatchOptions, BatchOptionsRequest } from './batch-options.ts';

export interface ContactRequest {
  contactId: string;
  name?: string | null;
  phoneNumber: string;
  metadata?: unknown;
  status?: ContactStatus | null;
  /** IANA zone of the contact: its calling window must be open here as well as in every zone of the number dialled (a geographic zone; fixed offsets such as EST are refused). */
  timezone?: string | null;
  /** The contact's consent record (consent.ts): source, ISO timestamp, and its wording or a reference. */
  consent?: ConsentRequest | null;
}

/** The retry policy as requested; absent fields take their defaults. */
export interface RetryRequest {
  maxAttempts: number;
  on?: string[] | null;
  delaySeconds?: number | null;
}

/** A calling window as requested: `days` absent means every day, `timezone` absent means `recipient`. */
export interface CallingWindowRequest {
  start: string;
  end: string;
  days?: string[] | null;
  timezone?: string | null;
}

/** A create request with well-typed values; absent optional fields are null or undefined. */
export interface CreateBatchRequest extends BatchOptionsRequest {
  agentId?: string | null;
  agentName?: string | null;
  versionId?: string | null;
  versionName?: string | null;
  voice?: string | null;
  didNumberId?: string | null;
  interruption: boolean;
  useAlternateNumber: boolean;
  startMode: StartMode;
  scheduleDate: string;
  scheduleTime: string;
  scheduleTimezone: string;
  concurrency?: number | null;
  callbackUrl?: string | null;
  deduplicateByPhone?: boolean | null;
  recordingEnabled?: boolean | null;
  maxDurationSecondsPerCall?: number | null;
  metadata?: unknown;
  contacts: ContactRequest[];
  idempotencyKey?: string | null;
  retry?: RetryRequest | null;
  /** A Date from GraphQL; REST's text, checked here so both surfaces word its problems alike. */
  expiresAt?: Date | string | null;
  callingWindow?: CallingWindowRequest | null;
  /** Compliance profiles the batch opts into, besides the account's (compliance/rules-v1.ts). */
  complianceProfiles?: readonly string[] | null;
}

/**
 * A request whose surface found type problems: a refused field is left out (undefined), and its
 * other values are checked all the same, so one answer lists every problem.
 */
export type CreateBatchRequestDraft = {
  [K in keyof CreateBatchRequest]?: K extends 'contacts'
    ? Array<Partial<ContactRequest> | undefined>
    : K extends 'retry'
      ? Partial<RetryRequest> | null | undefined
      : K extends 'callingWindow'
        ? Partial<CallingWindowRequest> | null | undefined
        : CreateBatchRequest[K] | undefined;
};

export interface RawContact {
  contactId: string;
  name: string | null;
  phoneNumber: string;
  /** Without forbidden keys at any depth (sanitizedJson): the submitted value, or a copy. Only read. */
  metadata: Record<string, unknown>;
  /** Why the metadata is refused (too large): the contact is rejected, not the request. */
  metadataProblem: string | null;
  status: ContactStatus;
  timezone: string | null;
  /** Present only when the contact gave one. */
  consent?: ConsentRecord;
}

export interface CreateBatchInput {
  agentId: string | null;
  agentName: string | null;
  versionId: string | null;
  versionName: string | null;
  voice: string | null;
  didNumberId: string | null;
  interruption: boolean;
  useAlternateNumber: boolean;
  startMode: StartMode;
  scheduleDate: string;
  scheduleTime: string;
  timezone: string;
  scheduledAt: Date;
  concurrency: number | null;
  callbackUrl: string | null;
  deduplicateByPhone: boolean;
  recordingEnabled: boolean | null;
  maxDurationSecondsPerCall: number | null;
  metadata: Record<string, unknown>;
  contacts: RawContact[];
  idempotencyKey: string | null;
  retry: RetryPolicy | null;
  expiresAt: Date | null;
  callingWindow: CallingWindow | null;
  /** The batch's own profiles, each once; the account's are added at create. */
  complianceProfiles: ComplianceProfile[];
  options: BatchOptions;
}
