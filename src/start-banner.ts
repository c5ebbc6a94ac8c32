// What `npm start` tells the person who ran it, beside the JSON logs: where it listens, where the
// dashboard is, and how to get a new key for a lost one (only a key's hash is stored). The first
// start also hands over the demo account, its id and its key, shown once.
import type { DemoSeed } from './services/accounts/demo-seed.ts';

export interface BannerFacts {
  url: string;
  /** The seeded demo account on a first start, else null. */
  demo: DemoSeed | null;
  /** The account the key hint names: the only one there is, else null (the hint says where to find ids). */
  soleAccountId: string | null;
}

const keyHint = (accountId: string | null) =>
  accountId
    ? `Lost the API key? npm run cli -- keys create ${accountId}`
    : 'Lost an API key? npm run cli -- keys create acc_…   (npm run cli -- accounts list shows the account ids)';

/** The lines printed on stdout after the start (a trailing newline included). */
export function startBanner({ url, demo, soleAccountId }: BannerFacts): string {
  const lines = demo
    ? [
        '',
        `Demo account created: ${demo.accountId}. Its API key (shown once, keep it):`,
        `  ${demo.apiKey}`,
        `Agent ${demo.agentId}, prompt version ${demo.versionId}, DID +14155550100.`,
        'Try:',
        `  curl -s ${url}/api/v1/public/me -H 'Authorization: Bearer ${demo.apiKey}'`,
        `Dashboard (paste the key): ${url}/dashboard   GraphiQL: ${url}/graphql`,
        'A first batch to watch: README.md, "A first batch".',
        keyHint(demo.accountId),
        '',
      ]
    : ['', `Call batch service on ${url}   dashboard: ${url}/dashboard   API reference: ${url}/docs`, keyHint(soleAccountId), ''];
  return lines.join('\n') + '\n';
}
