// Why a waiting call waits, on Call and on CallUpdate.
import { builder } from '../builder.ts';
import type { WaitReason } from '../../domain/wait-reason.ts';

export const CallWaitReason = builder.enumType('CallWaitReason', {
  description: 'Why a waiting call is not dialled before nextAttemptAt',
  values: {
    CALLING_WINDOW: { value: 'calling_window', description: 'Not placed yet: its calling window is closed; nextAttemptAt is when it opens' },
    RETRY: {
      value: 'retry',
      description: 'Put back in line by the retry policy (retryReason says why); nextAttemptAt is its next attempt, at an open window',
    },
    FREQUENCY_CAP: {
      value: 'frequency_cap',
      description: "Its number reached the account's frequency cap; nextAttemptAt is when a dial leaves the period",
    },
    CALLER_ID_CAP: {
      value: 'caller_id_cap',
      description:
        "Every caller-ID number it may be dialled from reached its daily cap (or is resting); nextAttemptAt is the next UTC day's start (sooner for a resting number)",
    },
  } satisfies Record<string, { value: WaitReason; description: string }>,
});
