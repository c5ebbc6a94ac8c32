import { arg, bool, frequencyCap, int, jsonArray, jsonObject, list, need, rate, version, type Command, type Flags } from './command.ts';
import { batchCommands } from './batch-commands.ts';
import { suppressionCommands } from './suppression-commands.ts';
import { registryCommands } from './registry-commands.ts';
import { parseWindowSpec } from './window-spec.ts';
import { ID_PREFIX } from '../domain/ids.ts';

function accountInput(f: Flags) {
  const limits = {
    maxBatchSize: int(f['max-batch-size'], 'max-batch-size'),
    maxConcurrentCalls: int(f['max-concurrent-calls'], 'max-concurrent-calls'),
    maxCallDurationSeconds: int(f['max-call-duration'], 'max-call-duration'),
    rateLimitPerMinute: int(f['rate-limit'], 'rate-limit'),
  };
  return {
    limits: Object.values(limits).some((v) => v !== undefined) ? limits : undefined,
    batchConcurrency: int(f['batch-concurrency'], 'batch-concurrency'),
    apiAccessEnabled: bool(f['api-access'], 'api-access'),
    interruptionEnabled: bool(f['interruption'], 'interruption'),
    recordingEnabled: bool(f['recording'], 'recording'),
    registryConsentExempt: bool(f['registry-consent-exempt'], 'registry-consent-exempt'),
    numberHealthWebhooks: bool(f['number-health-webhooks'], 'number-health-webhooks'),
    voices: list(f.voices),
    defaultCallingWindow: windowFlag(f['default-window']),
    enforcedCallingWindow: windowFlag(f['enforced-window']),
    frequencyCap: frequencyCap(f['frequency-cap'], 'frequency-cap'),
  };
}

/** `--agent`: an id (`agt-…`) as given, a name looked up among the account's agents (as REST's agent_name). */
async function agentIdOf(gql: Parameters<Command['run']>[0], account: string, agent: string): Promise<string> {
  if (agent.startsWith(ID_PREFIX.agent)) return agent;
  const { agents } = await gql<{ agents: { id: string; name: string }[] }>('{ agents { id name } }', {}, account);
  const found = agents.find((a) => a.name === agent);
  if (!found) throw new Error(`Agent named '${agent}' not found on account ${account} (agents list --account ${account} shows them)`);
  return found.id;
}

/** Absent: unchanged; `none`: cleared; else the window. */
const windowFlag = (v: Flags[string]) => (typeof v === 'string' ? parseWindowSpec(v) : undefined);
/** A DID's daily cap: N dials per UTC day, or `none` (no cap: null); absent: unchanged. */
const dailyCap = (v: Flags[string], name: string) => (v === 'none' || v === 'off' ? null : int(v, name));
const DID_FIELDS = 'id number areaCode region dailyCap isDefault';

const ACCOUNT_FIELDS = `id name email batchConcurrency apiAccessEnabled interruptionEnabled recordingEnabled registryConsentExempt numberHealthWebhooks voices
  limits { maxBatchSize maxConcurrentCalls maxCallDurationSeconds rateLimitPerMinute }
  defaultCallingWindow { start end days timezone } enforcedCallingWindow { start end days timezone }
  frequencyCap { maxCalls periodSeconds }`;
const ACCOUNT_FLAGS =
  '[--max-batch-size N] [--max-concurrent-calls N] [--max-call-duration S] [--rate-limit N] [--batch-concurrency N] [--voices a,b] [--api-access true|false] [--interruption true|false] [--recording true|false]' +
  ' [--default-window "09:00-20:00 mon-fri recipient"|none] [--enforced-window "08:00-21:00 recipient"|none] [--frequency-cap CALLS/PERIOD|off] [--registry-consent-exempt true|false] [--number-health-webhooks true|false]';

const flagDid = (gql: Parameters<Command['run']>[0], id: string, flagged: boolean, reason: string | null) =>
  gql(
    'mutation($id: ID!, $flagged: Boolean!, $reason: String) { adminFlagDidNumber(id: $id, flagged: $flagged, reason: $reason) { id number health { flagged flaggedReason restedUntil } } }',
    { id, flagged, reason },
  );

/** An agent, its first prompt version and a DID number for a new account. */
async function setUpCalling(gql: Parameters<Command['run']>[0], accountId: string, voices: string[], f: Flags) {
  const number = need(f.number, 'number');
  const voice = typeof f.voice === 'string' ? f.voice : voices[0];
  if (!voice) throw new Error('the account has no voices: give --voice or --voices');
  const as = <T>(query: string, variables: Record<string, unknown>) => gql<T>(query, variables, accountId);
  const { createAgent: agent } = await as<{ createAgent: { id: string } }>(
    'mutation($input: CreateAgentInput!) { createAgent(input: $input) { id } }',
    {
      input: { name: typeof f['agent-name'] === 'string' ? f['agent-name'] : 'Default agent', voice },
    },
  );
  const prompt = typeof f.prompt === 'string' ? f.prompt : 'You are a friendly assistant calling on behalf of the account holder.';
  const { createPromptVersion: version } = await as<{ createPromptVersion: { id: string } }>(
    'mutation($input: CreatePromptVersionInput!) { createPromptVersion(input: $input) { id } }',
    { input: { agentId: agent.id, name: 'v1', prompt } },
  );
  const { addDidNumber: did } = await as<{ addDidNumber: { id: string; number: string } }>(
    'mutation($input: AddDidNumberInput!) { addDidNumber(input: $input) { id number } }',
    { input: { number } },
  );
  return { agentId: agent.id, versionId: version.id, didNumberId: did.id, didNumber: did.number, voice };
}

export const commands: Record<string, Command> = {
  'accounts create': {
    usage: `accounts create --name NAME --email EMAIL ${ACCOUNT_FLAGS}`,
    examples: ['accounts create --name Acme --email ops@acme.test --max-batch-size 5000 --voices alloy,verse'],
    run: (gql, _a, f) =>
      gql(`mutation($input: AdminCreateAccountInput!) { adminCreateAccount(input: $input) { apiKey apiKeyId account { ${ACCOUNT_FIELDS} } } }`, {
        input: { name: need(f.name, 'name'), email: need(f.email, 'email'), ...accountInput(f) },
      }),
  },
  'accounts setup': {
    usage: `accounts setup --name NAME --email EMAIL --number +14155550123 [--voice VOICE] [--agent-name NAME] [--prompt TEXT] ${ACCOUNT_FLAGS}   (account, agent, prompt version and DID: ready to call)`,
    examples: ['accounts setup --name "Acme Sales" --email sales@acme.test --voices alloy --number +14155550123'],
    async run(gql, _a, f) {
      need(f.number, 'number');
      const input = { name: need(f.name, 'name'), email: need(f.email, 'email'), ...accountInput(f) };
      type Created = { adminCreateAccount: { apiKey: string; account: { id: string; voices: string[] } } };
      const { adminCreateAccount: created } = await gql<Created>(
        'mutation($input: AdminCreateAccountInput!) { adminCreateAccount(input: $input) { apiKey account { id voices } } }',
        { input },
      );
      const accountId = created.account.id;
      try {
        return { accountId, apiKey: created.apiKey, ...(await setUpCalling(gql, accountId, created.account.voices, f)) };
      } catch (e) {
        // The key is shown once: a half-done setup still hands it over.
        const why = e instanceof Error ? e.message : String(e);
        throw new Error(`Account ${accountId} was created (API key, shown once: ${created.apiKey}), but its setup stopped: ${why}`);
      }
    },
  },
  'accounts list': {
    usage: 'accounts list',
    examples: ['accounts list'],
    run: (gql) => gql(`{ adminAccounts { ${ACCOUNT_FIELDS} } }`),
  },
  'accounts update': {
    usage: `accounts update <account-id> [--name N] [--email E] ${ACCOUNT_FLAGS}`,
    examples: [
      'accounts update acc_… --rate-limit 1200 --default-window "09:00-20:00 mon-fri recipient"',
      'accounts update acc_… --default-window none',
    ],
    run: (gql, a, f) =>
      gql(`mutation($id: ID!, $input: AdminUpdateAccountInput!) { adminUpdateAccount(id: $id, input: $input) { ${ACCOUNT_FIELDS} } }`, {
        id: arg(a, 0, 'account-id'),
        input: { name: f.name, email: f.email, ...accountInput(f) },
      }),
  },
  'keys create': {
    usage: 'keys create <account-id>   (a new API key, e.g. for a lost one; older keys keep working until revoked)',
    examples: ['keys create acc_…'],
    run: (gql, a) => gql('mutation($id: ID!) { adminCreateApiKey(accountId: $id) { id apiKey } }', { id: arg(a, 0, 'account-id') }),
  },
  'keys list': {
    usage: 'keys list <account-id>',
    examples: ['keys list acc_…'],
    run: (gql, a) => gql('query($id: ID!) { adminApiKeys(accountId: $id) { id prefix createdAt revokedAt } }', { id: arg(a, 0, 'account-id') }),
  },
  'keys revoke': {
    usage: 'keys revoke <key-id>',
    examples: ['keys revoke key_…'],
    run: (gql, a) => gql('mutation($id: ID!) { adminRevokeApiKey(id: $id) }', { id: arg(a, 0, 'key-id') }),
  },
  'keys rotate': {
    usage: 'keys rotate <account-id>   (issues a new key, then revokes every older one)',
    examples: ['keys rotate acc_…'],
    run: async (gql, a) => {
      const id = arg(a, 0, 'account-id');
      const { adminApiKeys } = await gql<{ adminApiKeys: { id: string; revokedAt: string | null }[] }>(
        'query($id: ID!) { adminApiKeys(accountId: $id) { id revokedAt } }',
        { id },
      );
      const { adminCreateApiKey } = await gql<{ adminCreateApiKey: { id: string; apiKey: string } }>(
        'mutation($id: ID!) { adminCreateApiKey(accountId: $id) { id apiKey } }',
        { id },
      );
      const revoked: string[] = [];
      for (const k of adminApiKeys.filter((k) => !k.revokedAt)) {
        await gql('mutation($id: ID!) { adminRevokeApiKey(id: $id) }', { id: k.id });
        revoked.push(k.id);
      }
      return { newKey: adminCreateApiKey, revoked };
    },
  },
  'agents create': {
    usage:
      'agents create --account ID --name NAME --voice VOICE [--outcome-keys a,b] [--opt-out-key KEY] [--recording true|false] [--provider-agent-id ID]',
    examples: ['agents create --account acc_… --name "Renewals bot" --voice alloy --outcome-keys interested,opt_out --opt-out-key opt_out'],
    run: (gql, _a, f) =>
      gql(
        'mutation($input: CreateAgentInput!) { createAgent(input: $input) { id name voice outcomeKeys optOutOutcomeKey recordingEnabled providerAgentId } }',
        {
          input: {
            name: need(f.name, 'name'),
            voice: need(f.voice, 'voice'),
            outcomeKeys: list(f['outcome-keys']),
            optOutOutcomeKey: f['opt-out-key'],
            recordingEnabled: bool(f.recording, 'recording'),
            providerAgentId: f['provider-agent-id'],
          },
        },
        need(f.account, 'account'),
      ),
  },
  'agents update': {
    usage:
      'agents update <agent-id> --account ID [--opt-out-key KEY|off] [--opt-out-detection on|off]   (the outcome key whose yes puts the contact on the do-not-call list; detection by the default key and phrases, on by default)',
    examples: ['agents update agt-… --account acc_… --opt-out-key off', 'agents update agt-… --account acc_… --opt-out-detection off'],
    run: (gql, a, f) => {
      const detection = f['opt-out-detection'] === undefined ? undefined : need(f['opt-out-detection'], 'opt-out-detection');
      const key = f['opt-out-key'] === undefined && detection !== undefined ? undefined : need(f['opt-out-key'], 'opt-out-key');
      if (detection !== undefined && detection !== 'on' && detection !== 'off') throw new Error('--opt-out-detection takes on or off');
      const input = {
        ...(key !== undefined ? { optOutOutcomeKey: key === 'off' ? null : key } : {}),
        ...(detection !== undefined ? { optOutDetection: detection === 'on' } : {}),
      };
      return gql(
        'mutation($id: ID!, $input: UpdateAgentInput!) { updateAgent(id: $id, input: $input) { id name outcomeKeys optOutOutcomeKey optOutDetection } }',
        { id: arg(a, 0, 'agent-id'), input },
        need(f.account, 'account'),
      );
    },
  },
  'agents list': {
    usage: 'agents list --account ID',
    examples: ['agents list --account acc_…'],
    run: (gql, _a, f) => gql('{ agents { id name voice outcomeKeys optOutOutcomeKey recordingEnabled } }', {}, need(f.account, 'account')),
  },
  'versions create': {
    usage: 'versions create --account ID --agent AGENT --name NAME --prompt TEXT [--provider-agent-version N]   (AGENT: an id or a name)',
    examples: ['versions create --account acc_… --agent "Demo Agent" --name v2 --prompt "You are calling about a renewal."'],
    run: async (gql, _a, f) =>
      gql(
        'mutation($input: CreatePromptVersionInput!) { createPromptVersion(input: $input) { id name providerAgentVersion agent { id } } }',
        {
          input: {
            agentId: await agentIdOf(gql, need(f.account, 'account'), need(f.agent, 'agent')),
            name: need(f.name, 'name'),
            prompt: need(f.prompt, 'prompt'),
            providerAgentVersion: version(f['provider-agent-version'], 'provider-agent-version'),
          },
        },
        need(f.account, 'account'),
      ),
  },
  'versions list': {
    usage: 'versions list --account ID [--agent AGENT]   (AGENT: an id or a name)',
    examples: ['versions list --account acc_…', 'versions list --account acc_… --agent "Demo Agent"'],
    run: async (gql, _a, f) => {
      const account = need(f.account, 'account');
      const agentId = typeof f.agent === 'string' ? await agentIdOf(gql, account, f.agent) : undefined;
      return gql('query($agentId: ID) { promptVersions(agentId: $agentId) { id name agent { id name } } }', { agentId }, account);
    },
  },
  'dids add': {
    usage: 'dids add --account ID --number +14155550123 [--daily-cap N] [--default true]   (caller-ID pool: docs/campaigns.md)',
    examples: ['dids add --account acc_… --number +14155550124', 'dids add --account acc_… --number +12125550100 --daily-cap 100 --default true'],
    run: (gql, _a, f) =>
      gql(
        `mutation($input: AddDidNumberInput!) { addDidNumber(input: $input) { ${DID_FIELDS} } }`,
        { input: { number: need(f.number, 'number'), dailyCap: dailyCap(f['daily-cap'], 'daily-cap'), isDefault: bool(f.default, 'default') } },
        need(f.account, 'account'),
      ),
  },
  'dids set': {
    usage: 'dids set --account ID --did DID_ID [--daily-cap N|none] [--default true|false]',
    examples: ['dids set --account acc_… --did did_… --daily-cap 150', 'dids set --account acc_… --did did_… --daily-cap none --default true'],
    run: (gql, _a, f) =>
      gql(
        `mutation($id: ID!, $input: UpdateDidNumberInput!) { updateDidNumber(id: $id, input: $input) { ${DID_FIELDS} } }`,
        { id: need(f.did, 'did'), input: { dailyCap: dailyCap(f['daily-cap'], 'daily-cap'), isDefault: bool(f.default, 'default') } },
        need(f.account, 'account'),
      ),
  },
  'dids list': {
    usage: 'dids list --account ID',
    examples: ['dids list --account acc_…'],
    run: (gql, _a, f) => gql(`{ didNumbers { ${DID_FIELDS} } }`, {}, need(f.account, 'account')),
  },
  'dids health': {
    usage: "dids health --account ID   (each number's rolling dials, answer and short-call rates, rest and flag)",
    examples: ['dids health --account acc_…'],
    run: (gql, _a, f) =>
      gql(
        '{ didNumbers { id number health { dials answered shortCalls answerRate shortCallRate restedUntil restReason flagged flaggedReason } } }',
        {},
        need(f.account, 'account'),
      ),
  },
  'dids flag': {
    usage: 'dids flag <did-id> [--reason TEXT]   (a flagged number is not used as caller ID and is rested; reason at most 200 characters)',
    examples: ['dids flag did_… --reason "carrier spam label"'],
    run: (gql, a, f) => flagDid(gql, arg(a, 0, 'did-id'), true, typeof f.reason === 'string' ? f.reason : null),
  },
  'dids unflag': {
    usage: 'dids unflag <did-id>   (a rest the flag caused ends at once)',
    examples: ['dids unflag did_…'],
    run: (gql, a) => flagDid(gql, arg(a, 0, 'did-id'), false, null),
  },
  'voices set': {
    usage: 'voices set <account-id> alloy,verse,…',
    examples: ['voices set acc_… alloy,verse'],
    run: (gql, a) =>
      gql('mutation($id: ID!, $input: AdminUpdateAccountInput!) { adminUpdateAccount(id: $id, input: $input) { id voices } }', {
        id: arg(a, 0, 'account-id'),
        input: { voices: list(arg(a, 1, 'voices')) },
      }),
  },
  'provider set': {
    usage:
      'provider set PROVIDER --account ID [--api-key KEY] [--dial-rate CALLS_PER_SECOND_PER_NUMBER] [--settings JSON_OBJECT]   (simulator, retell, …: docs/providers.md; config stored encrypted)',
    examples: ['provider set retell --account acc_… --api-key "$RETELL_API_KEY" --dial-rate 1', 'provider set simulator --account acc_…'],
    run: (gql, a, f) =>
      gql(
        'mutation($id: ID!, $p: String!, $k: String, $r: Float, $s: JSON) { adminSetProvider(accountId: $id, provider: $p, apiKey: $k, dialRatePerNumber: $r, settings: $s) }',
        {
          id: need(f.account, 'account'),
          p: arg(a, 0, 'provider'),
          k: typeof f['api-key'] === 'string' ? f['api-key'] : null,
          r: rate(f['dial-rate'], 'dial-rate'),
          s: jsonObject(f.settings, 'settings'),
        },
      ),
  },
  'provider route': {
    usage:
      'provider route --account ID --providers JSON_ARRAY   (in order; each {"provider", "weight"?, "apiKey"?, "dialRatePerNumber"?, "settings"?}: docs/providers.md "Routing and failover")',
    examples: [
      'provider route --account acc_… --providers \'[{"provider":"retell","apiKey":"key_…"},{"provider":"vapi","apiKey":"…","settings":{"phoneNumbers":"*=pn_…","webhookAuth":"hmac","webhookSecret":"…"}}]\'',
    ],
    run: (gql, _a, f) =>
      gql('mutation($id: ID!, $p: [ProviderRouteInput!]!) { adminSetProviderRoute(accountId: $id, providers: $p) }', {
        id: need(f.account, 'account'),
        p: jsonArray(f.providers, 'providers'),
      }),
  },
  'webhooks secret': {
    usage: 'webhooks secret show|rotate --account ID   (Standard Webhooks signing secret; rotate keeps the old one signing for 24 h)',
    examples: ['webhooks secret show --account acc_…', 'webhooks secret rotate --account acc_…'],
    run: (gql, a, f) => {
      const fields = 'secret previousSecret rotatedAt previousSecretExpiresAt';
      const action = arg(a, 0, 'show|rotate');
      if (action === 'show') return gql(`{ webhookSecret { ${fields} } }`, {}, need(f.account, 'account'));
      if (action === 'rotate') return gql(`mutation { rotateWebhookSecret { ${fields} } }`, {}, need(f.account, 'account'));
      throw new Error('webhooks secret: expected show or rotate');
    },
  },
  'voices list': {
    usage: 'voices list --account ID',
    examples: ['voices list --account acc_…'],
    run: (gql, _a, f) => gql('{ me { id voices } }', {}, need(f.account, 'account')),
  },
  ...batchCommands,
  ...suppressionCommands,
  ...registryCommands,
};
