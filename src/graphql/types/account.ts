import { ComplianceProfileEnum } from './compliance-profile.ts';
import { accountProfiles, profilesInForce } from '../../domain/compliance/profiles.ts';
import { builder } from '../builder.ts';
import type { Account } from '../../generated/prisma/client.ts';
import { createAccount, updateAccount } from '../../services/accounts/accounts.ts';
import { issueApiKey, revokeApiKey } from '../../services/auth/api-keys.ts';
import { CallingWindowInput, CallingWindowType } from './calling-window.ts';
import { storedWindow } from '../../domain/calling-window.ts';
import type { CallingWindowRequest } from '../../domain/create-batch-types.ts';
import { frequencyCapOf, type FrequencyCap } from '../../domain/frequency-cap.ts';

const AccountLimits = builder.objectRef<Account>('AccountLimits').implement({
  fields: (t) => ({
    maxBatchSize: t.exposeInt('maxBatchSize'),
    maxConcurrentCalls: t.exposeInt('maxConcurrentCalls'),
    maxCallDurationSeconds: t.exposeInt('maxCallDurationSeconds'),
    rateLimitPerMinute: t.exposeInt('rateLimitPerMinute'),
  }),
});

const FrequencyCapType = builder.objectRef<FrequencyCap>('FrequencyCap').implement({
  description: "At most maxCalls dials to one number in any periodSeconds, across the account's batches",
  fields: (t) => ({
    maxCalls: t.exposeInt('maxCalls'),
    periodSeconds: t.exposeInt('periodSeconds'),
  }),
});

export const AccountType = builder.prismaObject('Account', {
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    email: t.exposeString('email'),
    limits: t.field({ type: AccountLimits, resolve: (a) => a }),
    batchConcurrency: t.exposeInt('batchConcurrency'),
    apiAccessEnabled: t.exposeBoolean('apiAccessEnabled'),
    interruptionEnabled: t.exposeBoolean('interruptionEnabled'),
    registryConsentExempt: t.exposeBoolean('registryConsentExempt', {
      description:
        'Whether contacts with a consent record are spared the national do-not-call registry (never a number reassigned after the consent)',
    }),
    recordingEnabled: t.exposeBoolean('recordingEnabled'),
    numberHealthWebhooks: t.exposeBoolean('numberHealthWebhooks', {
      description: "Whether number.rested / number.restored webhooks go to the callback URLs of the account's batches under way",
    }),
    voices: t.exposeStringList('voices'),
    provider: t.exposeString('provider'),
    defaultCallingWindow: t.field({
      type: CallingWindowType,
      nullable: true,
      description: 'Given to a batch created without a calling window of its own; null: such a batch calls at any time',
      resolve: (a) => storedWindow(a.defaultCallingWindow),
    }),
    enforcedCallingWindow: t.field({
      type: CallingWindowType,
      nullable: true,
      description: 'Narrows every unfinished batch of the account: its calls are placed only when this window is open too',
      resolve: (a) => storedWindow(a.enforcedCallingWindow),
    }),
    frequencyCap: t.field({
      type: FrequencyCapType,
      nullable: true,
      description: 'Dials per number per period across batches; null: no cap',
      resolve: (a) => frequencyCapOf(a),
    }),
    complianceProfiles: t.field({
      type: [ComplianceProfileEnum],
      nullable: true,
      description: "The account's compliance profiles; null: the service default applies (see effectiveComplianceProfiles); []: none (opted out)",
      resolve: (a) => accountProfiles(a),
    }),
    effectiveComplianceProfiles: t.field({
      type: [ComplianceProfileEnum],
      description: 'The profiles its new batches get (with what each includes), before a batch adds its own',
      resolve: (a, _args, ctx) => profilesInForce(accountProfiles(a) ?? ctx.deps.config.DEFAULT_COMPLIANCE_PROFILES),
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

builder.queryField('me', (t) =>
  t.prismaField({
    type: 'Account',
    description: "The API key's account",
    resolve: async (_query, _root, _args, ctx) => ctx.account(),
  }),
);

const AccountLimitsInput = builder.inputType('AccountLimitsInput', {
  fields: (t) => ({
    maxBatchSize: t.int(),
    maxConcurrentCalls: t.int(),
    maxCallDurationSeconds: t.int(),
    rateLimitPerMinute: t.int(),
  }),
});

const FrequencyCapInput = builder.inputType('FrequencyCapInput', {
  fields: (t) => ({
    maxCalls: t.int({ required: true, description: '1-100' }),
    periodSeconds: t.int({ required: true, description: '3600 (an hour) to 2592000 (30 days)' }),
  }),
});

const accountInputFields = (t: Parameters<Parameters<typeof builder.inputType>[1]['fields']>[0]) => ({
  limits: t.field({ type: AccountLimitsInput }),
  batchConcurrency: t.int(),
  apiAccessEnabled: t.boolean(),
  interruptionEnabled: t.boolean(),
  recordingEnabled: t.boolean(),
  registryConsentExempt: t.boolean({
    description:
      'true: a contact with a consent record is not refused for a number on the national do-not-call registry (TCPA prior express consent); default false',
  }),
  numberHealthWebhooks: t.boolean({
    description: "true: number.rested / number.restored webhooks go to the callback URLs of the account's batches under way; default false",
  }),
  voices: t.stringList(),
  defaultCallingWindow: t.field({ type: CallingWindowInput, description: 'A batch without a window of its own gets this one; null clears it' }),
  enforcedCallingWindow: t.field({
    type: CallingWindowInput,
    description: 'Every unfinished batch places calls only inside it too, running ones once their calls are re-placed under it; null clears it',
  }),
  frequencyCap: t.field({ type: FrequencyCapInput, description: 'null clears the cap; absent leaves it as it is' }),
  complianceProfiles: t.field({
    type: [ComplianceProfileEnum],
    description:
      'Compliance profiles for every batch of the account; [] opts out of the service default; null returns to it; absent leaves it as it is',
  }),
});

const AdminCreateAccountInput = builder.inputType('AdminCreateAccountInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    email: t.string({ required: true }),
    ...accountInputFields(t),
  }),
});

const AdminUpdateAccountInput = builder.inputType('AdminUpdateAccountInput', {
  fields: (t) => ({
    name: t.string(),
    email: t.string(),
    ...accountInputFields(t),
  }),
});

const CreatedAccount = builder.objectRef<{ account: Account; apiKey: string; apiKeyId: string }>('CreatedAccount').implement({
  fields: (t) => ({
    account: t.field({ type: AccountType, resolve: (r) => r.account }),
    apiKey: t.exposeString('apiKey', { description: 'Shown once; only its hash is stored' }),
    apiKeyId: t.exposeString('apiKeyId'),
  }),
});

const IssuedApiKey = builder.objectRef<{ id: string; apiKey: string }>('IssuedApiKey').implement({
  fields: (t) => ({ id: t.exposeID('id'), apiKey: t.exposeString('apiKey') }),
});

/** The window fields as given: an explicit null clears a window, which nonNull would drop. */
const windowsOf = (input: { defaultCallingWindow?: CallingWindowRequest | null; enforcedCallingWindow?: CallingWindowRequest | null }) => ({
  defaultCallingWindow: input.defaultCallingWindow,
  enforcedCallingWindow: input.enforcedCallingWindow,
});

const nonNull = <T extends object>(o: T) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v != null)) as { [K in keyof T]: NonNullable<T[K]> };

builder.mutationFields((t) => ({
  adminCreateAccount: t.field({
    type: CreatedAccount,
    args: { input: t.arg({ type: AdminCreateAccountInput, required: true }) },
    authScopes: { admin: true },
    resolve: async (_r, { input }, ctx) => {
      return createAccount(ctx.deps.db, {
        ...nonNull(input),
        ...windowsOf(input),
        limits: input.limits ? nonNull(input.limits) : undefined,
        frequencyCap: input.frequencyCap,
        complianceProfiles: input.complianceProfiles,
      });
    },
  }),
  adminUpdateAccount: t.field({
    type: AccountType,
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: AdminUpdateAccountInput, required: true }) },
    authScopes: { admin: true },
    resolve: async (_r, { id, input }, ctx) => {
      const account = await updateAccount(
        ctx.deps.db,
        String(id),
        {
          ...nonNull(input),
          ...windowsOf(input),
          limits: input.limits ? nonNull(input.limits) : undefined,
          frequencyCap: input.frequencyCap,
          complianceProfiles: input.complianceProfiles,
        },
        ctx.deps.clock.now(),
      );
      // This process sees the change at once; others within API_KEY_CACHE_MS.
      ctx.deps.keys.clear();
      return account;
    },
  }),
  adminCreateApiKey: t.field({
    type: IssuedApiKey,
    args: { accountId: t.arg.id({ required: true }) },
    authScopes: { admin: true },
    resolve: async (_r, { accountId }, ctx) => {
      await updateAccount(ctx.deps.db, String(accountId), {}, ctx.deps.clock.now());
      return issueApiKey(ctx.deps.db, String(accountId));
    },
  }),
  adminRevokeApiKey: t.boolean({
    args: { id: t.arg.id({ required: true }) },
    authScopes: { admin: true },
    resolve: async (_r, { id }, ctx) => {
      const revoked = await revokeApiKey(ctx.deps.db, String(id));
      ctx.deps.keys.clear();
      return revoked;
    },
  }),
}));

builder.prismaObject('ApiKey', {
  fields: (t) => ({
    id: t.exposeID('id'),
    prefix: t.exposeString('prefix', { description: 'First characters of the key, to tell keys apart' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true }),
  }),
});

builder.queryFields((t) => ({
  adminAccounts: t.prismaField({
    type: ['Account'],
    authScopes: { admin: true },
    resolve: async (query, _r, _a, ctx) => {
      return ctx.deps.db.prisma.account.findMany({ ...query, orderBy: { id: 'asc' } });
    },
  }),
  adminApiKeys: t.prismaField({
    type: ['ApiKey'],
    args: { accountId: t.arg.id({ required: true }) },
    authScopes: { admin: true },
    resolve: async (query, _r, { accountId }, ctx) => {
      return ctx.deps.db.prisma.apiKey.findMany({ ...query, where: { accountId: String(accountId) }, orderBy: { id: 'asc' } });
    },
  }),
}));
