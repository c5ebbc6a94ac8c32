// Vapi's calls as the analysis waits read them (../analysis-waits.ts): the end-of-call-report ("sent
// when the call ends and post-processing is complete") carries `analysis` (summary, structuredData);
// it is stored by the webhook, or read on the call fetched by GET /call/{id}.
import type { AnalysisCalls } from '../analysis-waits.ts';
import {
  analysisFromCall,
  hasAnalysis,
  isAnsweredCall,
  isFinalCall,
  recordingOf,
  type VapiAnalysisSource,
  type VapiCallObject,
} from './call-mapping.ts';
import type { VapiClients } from './clients.ts';
import { retryAfterMs } from './dial-errors.ts';

export function vapiAnalysisCalls(
  client: VapiClients,
  reports: (vapiCallIds: string[]) => Promise<VapiCallObject[]>,
): AnalysisCalls<VapiAnalysisSource, VapiCallObject> {
  return {
    provider: 'Vapi',
    idOf: (c) => c.id,
    hasAnalysis,
    isFinalAnswered: (c) => isFinalCall(c) && isAnsweredCall(c),
    sourceOf: (c) => ({ analysis: c.analysis, artifact: c.artifact }),
    analysisOf: analysisFromCall,
    recordingOf,
    stored: reports,
    fetch: async (apiKey, id) => (await client(apiKey).calls.get({ id })) as unknown as VapiCallObject,
    retryAfterMs,
  };
}
