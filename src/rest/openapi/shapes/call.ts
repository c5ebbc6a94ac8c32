// A call record, as the batch's calls and results pages list it.
import type { CallRecord, ConsentOut } from '../../../services/representations.ts';
import { CALL_STATUSES, TRANSCRIPT_STATUSES } from '../../../domain/call-state.ts';
import { ATTEMPT_OUTCOMES } from '../../../domain/attempt-outcome.ts';
import { bool, closed, count, nullable, oneOfStrings, str, timestamp } from '../json-schema.ts';
import { agentId, batchId, versionId } from './fields.ts';

const callStatus = oneOfStrings(CALL_STATUSES, 'Call status');

export const callRecord = closed<CallRecord>(
  {
    call_id: str('Call id, `call_<id>`', { pattern: '^call_' }),
    batch_id: batchId,
    contact_id: str("The caller's contact id"),
    external_id: str('Same value as contact_id'),
    phone_number: str('The number dialled (the alternate one when it was used)'),
    agent_id: agentId,
    agent_name: str(),
    version_id: versionId,
    version_name: str(),
    voice: str('Voice used'),
    status: callStatus,
    call_status: { ...callStatus, description: 'Same value as status' },
    transcript_status: nullable(oneOfStrings(TRANSCRIPT_STATUSES, 'null for a call not yet made')),
    duration_seconds: nullable(count('Total call duration')),
    answer_duration_seconds: nullable(count('Duration after answer')),
    timestamp: nullable(timestamp()),
    created_at: timestamp(),
    completed_at: nullable(timestamp()),
    hangup_by: nullable(oneOfStrings(['agent', 'user', 'system'], 'Who ended the call')),
    disconnect_reason: nullable(str('Why the call ended, e.g. `normal`, `agent_hangup`')),
    summary: nullable(str('AI-generated call summary')),
    outcomes: nullable({
      type: 'object',
      // Every analyser here writes strings; a value stored another way is passed through as stored.
      description: "AI-extracted outcomes, string values keyed by the agent's configured outcome keys",
      additionalProperties: true,
    }),
    recording_available: nullable(bool('Whether a recording exists')),
    recording_url: nullable(str('Signed, expiring link to the recording')),
    llm_transcript: nullable(str('Full call transcript')),
    attempts: count('Dials made so far, the alternate number included'),
    next_attempt_at: nullable(
      timestamp('When a waiting call is next tried: its retry, its calling window opening, or the frequency cap letting it through; null otherwise'),
    ),
    timezone: nullable(str('The zones its calling window is judged in, comma-separated (a number can have several); null without a window')),
    retry_reason: nullable(
      oneOfStrings(ATTEMPT_OUTCOMES, 'Why a call waiting for a retry waits: how its last attempt ended; null unless it waits for one'),
    ),
    primary_phone_number: str("The contact's primary number: `phone_number` is the number dialled, the alternate one when it was used"),
    consent: nullable(
      closed<ConsentOut>(
        {
          source: str('Where consent was given (e.g. web_form)'),
          timestamp: timestamp('When consent was given'),
          text: nullable(str('The wording consented to')),
          reference: nullable(str('Where the proof is kept')),
        },
        'The contact\'s consent record as given at create (docs/campaigns.md "Consent records"); null without one',
      ),
    ),
    voicemail_left: nullable(
      bool(
        "Beside the contract: whether an attempt that reached voicemail left the batch's voicemail_message (true) or hung up (false); null: voicemail not reached, or unknown (the batch chose no voicemail setting)",
      ),
    ),
    from_number: nullable(
      str(
        'Beside the contract: the caller-ID number (E.164) its latest dial was placed from - the batch\'s own DID, else one chosen from the account\'s pool (docs/campaigns.md "Caller-ID pools and local presence"); null: never dialled',
      ),
    ),
  },
  'A call of a batch, with its AI results once analysed.',
);
