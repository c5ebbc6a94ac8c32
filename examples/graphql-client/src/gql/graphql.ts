/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
/** How an attempt can end without reaching the person */
export type CallAttemptOutcome =
  | 'busy'
  | 'failed'
  | 'no_answer'
  | 'voicemail'
  | 'voicemail_left';

export type CallBatchContactInput = {
  /** The contact's consent record */
  consent?: ContactConsentInput | null | undefined;
  contactId: string;
  /** Keys are normalised (e.g. `First Name` -> `first_name`) */
  metadata?: unknown;
  name?: string | null | undefined;
  phoneNumber: string;
  /** Initial call status; default `queued` unless `pending` */
  status?: CallBatchContactStatus | null | undefined;
  /** IANA zone of the contact: its calling window must be open here as well as in every zone of the number dialled (a geographic zone; fixed offsets such as EST are refused) */
  timezone?: string | null | undefined;
};

export type CallBatchContactStatus =
  | 'pending'
  | 'queued';

/** Try a call again after these outcomes (docs/campaigns.md) */
export type CallBatchRetryInput = {
  /** Wait before the next attempt, 60-86400 (default 3600) */
  delaySeconds?: number | null | undefined;
  /** Dials per call at most, the alternate number included (1-10) */
  maxAttempts: number;
  /** Default no_answer, busy, voicemail */
  on?: Array<CallAttemptOutcome> | null | undefined;
};

export type CallBatchStartMode =
  | 'immediate'
  | 'manual'
  | 'scheduled';

/** What a call that reaches voicemail does: hang up, or leave voicemail_message; absent: the provider's or agent's own behaviour */
export type CallBatchVoicemail =
  | 'hangup'
  | 'leave_message';

/** Local hours and days in which calls are placed (docs/campaigns.md) */
export type CallingWindowInput = {
  /** Default every day */
  days?: Array<Weekday> | null | undefined;
  /** Local HH:MM, exclusive; after start (no overnight windows); 24:00 is the end of the day */
  end: string;
  /** Local HH:MM, inclusive */
  start: string;
  /** An IANA zone, or "recipient" (the default): every zone that can apply to the number dialled (its prefix zones, every zone of its area code for an unlisted exchange, and the contact's own timezone) must be open. A window that does not open within 15 days for a contact rejects that contact. */
  timezone?: string | null | undefined;
};

/** A set of calling rules (docs/campaigns.md "Compliance profiles"); the most restrictive rule wins */
export type ComplianceProfile =
  /** US numbers: no calls on federal holidays (5 U.S.C. 6103) in the called party's local date. */
  | 'us_federal_holidays'
  /** us_tcpa plus the state rules of the number's state (by area code): hours, no-call days, calls per 24 hours. */
  | 'us_states'
  /** US numbers: calls only 08:00-21:00 in the called party's local time (TCPA). */
  | 'us_tcpa';

/** A contact's consent record (docs/campaigns.md "Consent records"): stored with its call, returned on it and in the CSV export. */
export type ContactConsentInput = {
  /** Where the proof is kept (URL, document or recording id), at most 500 characters */
  reference?: string | null | undefined;
  /** Where consent was given: a label of at most 64 letters, digits, spaces and _ . : / - (e.g. web_form, paper_form, verbal_recorded, ivr) */
  source: string;
  /** The wording consented to, at most 2000 characters */
  text?: string | null | undefined;
  /** When consent was given: ISO 8601 with a time zone, not in the future */
  timestamp: string;
};

/** The contract's create request in camelCase. With idempotencyKey it behaves as PUT, without it as POST. */
export type CreateCallBatchInput = {
  agentId?: string | null | undefined;
  agentName?: string | null | undefined;
  callbackUrl?: string | null | undefined;
  /** Local hours and days in which calls are placed; without it, the account's default window (if any). The account's enforced window narrows it. */
  callingWindow?: CallingWindowInput | null | undefined;
  /** Compliance profiles for this batch's calls besides the account's (or the service default): their rules narrow the windows, the most restrictive wins */
  complianceProfiles?: Array<ComplianceProfile> | null | undefined;
  concurrency?: number | null | undefined;
  /** The contacts as one value; give this or `contacts` */
  contactList?: Array<CallBatchContactInput> | null | undefined;
  /** The contacts; give this or `contactList` */
  contacts?: Array<CallBatchContactInput> | null | undefined;
  deduplicateByPhone?: boolean | null | undefined;
  /** DID number id, or the number itself */
  didNumberId?: string | null | undefined;
  /** A call not placed by then is never placed (it ends cancelled, disconnectReason expired) */
  expiresAt?: string | null | undefined;
  /** 1 to 128 characters; scoped to the account */
  idempotencyKey?: string | null | undefined;
  interruption: boolean;
  /** A name for people to know the batch by (dashboard, batch details, webhooks); not unique, not used for dispatch. At most 200 characters; blank: none */
  label?: string | null | undefined;
  maxDurationSecondsPerCall?: number | null | undefined;
  metadata?: unknown;
  recordingEnabled?: boolean | null | undefined;
  /** Retry policy; without it each contact is dialled once (plus its alternate number) */
  retry?: CallBatchRetryInput | null | undefined;
  /** YYYY-MM-DD */
  scheduleDate: string;
  /** HH:MM */
  scheduleTime: string;
  /** IANA zone, optionally followed by "(ABBR, UTC±hh:mm)" */
  scheduleTimezone: string;
  startMode: CallBatchStartMode;
  useAlternateNumber: boolean;
  versionId?: string | null | undefined;
  versionName?: string | null | undefined;
  voice?: string | null | undefined;
  /** What a call that reaches voicemail does: hang up, or leave voicemail_message; absent: the provider's or agent's own behaviour; null: none */
  voicemail?: CallBatchVoicemail | null | undefined;
  /** The message the provider's voice reads onto the voicemail; required with voicemail leave_message, refused otherwise. At most 1000 characters; blank: none */
  voicemailMessage?: string | null | undefined;
};

export type Weekday =
  | 'fri'
  | 'mon'
  | 'sat'
  | 'sun'
  | 'thu'
  | 'tue'
  | 'wed';

export type AccountAndAgentsQueryVariables = Exact<{ [key: string]: never; }>;


export type AccountAndAgentsQuery = { me: { name: string }, agents: Array<{ id: string, name: string, promptVersions: Array<{ id: string, name: string }> }> };

export type RecentBatchesQueryVariables = Exact<{
  limit: number;
}>;


export type RecentBatchesQuery = { batches: { items: Array<{ id: string, status: string, startMode: string, acceptedContacts: number, completed: number, failed: number, createdAt: string }>, pagination: { total: number } } };

export type CreateManualBatchMutationVariables = Exact<{
  input: CreateCallBatchInput;
}>;


export type CreateManualBatchMutation = { createCallBatch: { batchId: string, status: string, acceptedContacts: number, rejectedContacts: number } };

export type StartBatchMutationVariables = Exact<{
  id: string | number;
}>;


export type StartBatchMutation = { startBatch: { id: string, status: string } };

export type BatchProgressSubscriptionVariables = Exact<{
  batchId: string | number;
}>;


export type BatchProgressSubscription = { batchProgress: { status: string, queued: number, inProgress: number, completed: number, failed: number, cancelled: number, acceptedContacts: number } };

export class TypedDocumentString<TResult, TVariables>
  extends String
  implements DocumentTypeDecoration<TResult, TVariables>
{
  __apiType?: NonNullable<DocumentTypeDecoration<TResult, TVariables>['__apiType']>;
  private value: string;
  public __meta__?: Record<string, any> | undefined;

  constructor(value: string, __meta__?: Record<string, any> | undefined) {
    super(value);
    this.value = value;
    this.__meta__ = __meta__;
  }

  override toString(): string & DocumentTypeDecoration<TResult, TVariables> {
    return this.value;
  }
}

export const AccountAndAgentsDocument = new TypedDocumentString(`
    query AccountAndAgents {
  me {
    name
  }
  agents {
    id
    name
    promptVersions {
      id
      name
    }
  }
}
    `) as unknown as TypedDocumentString<AccountAndAgentsQuery, AccountAndAgentsQueryVariables>;
export const RecentBatchesDocument = new TypedDocumentString(`
    query RecentBatches($limit: Int!) {
  batches(limit: $limit) {
    items {
      id
      status
      startMode
      acceptedContacts
      completed
      failed
      createdAt
    }
    pagination {
      total
    }
  }
}
    `) as unknown as TypedDocumentString<RecentBatchesQuery, RecentBatchesQueryVariables>;
export const CreateManualBatchDocument = new TypedDocumentString(`
    mutation CreateManualBatch($input: CreateCallBatchInput!) {
  createCallBatch(input: $input) {
    batchId
    status
    acceptedContacts
    rejectedContacts
  }
}
    `) as unknown as TypedDocumentString<CreateManualBatchMutation, CreateManualBatchMutationVariables>;
export const StartBatchDocument = new TypedDocumentString(`
    mutation StartBatch($id: ID!) {
  startBatch(id: $id) {
    id
    status
  }
}
    `) as unknown as TypedDocumentString<StartBatchMutation, StartBatchMutationVariables>;
export const BatchProgressDocument = new TypedDocumentString(`
    subscription BatchProgress($batchId: ID!) {
  batchProgress(batchId: $batchId) {
    status
    queued
    inProgress
    completed
    failed
    cancelled
    acceptedContacts
  }
}
    `) as unknown as TypedDocumentString<BatchProgressSubscription, BatchProgressSubscriptionVariables>;