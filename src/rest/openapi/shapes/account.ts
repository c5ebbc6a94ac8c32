// The account and its limits.
import type { AccountOut } from '../../mappers.ts';
import { closed, int, ref, str } from '../json-schema.ts';

type Limits = AccountOut['limits'];

export const limits = closed<Limits>({
  max_batch_size: int('Contacts per batch'),
  max_concurrent_calls: int(),
  max_call_duration_seconds: int(),
  rate_limit_per_minute: int('Requests per minute'),
});

export const account = closed<AccountOut>({
  account_id: str(),
  name: str(),
  email: str(),
  limits: ref('Limits'),
});
