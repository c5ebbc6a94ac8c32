// Retell's calls as the analysis waits read them (../analysis-waits.ts): the analysis arrives as a
// call_analyzed event, stored by the webhook, or on the call fetched by get-call.
import type { AnalysisCalls } from '../analysis-waits.ts';
import {
  analysisFromCall,
  hasAnalysis,
  isAnsweredCall,
  isFinalCall,
  recordingOf,
  type RetellAnalysisSource,
  type RetellCallObject,
} from './call-mapping.ts';
import type { RetellClients } from './clients.ts';
import { retryAfterMs } from './dial-errors.ts';

export function retellAnalysisCalls(
  client: RetellClients,
  analyzed: (retellCallIds: string[]) => Promise<RetellCallObject[]>,
): AnalysisCalls<RetellAnalysisSource, RetellCallObject> {
  return {
    provider: 'Retell',
    idOf: (c) => c.call_id,
    hasAnalysis,
    isFinalAnswered: (c) => isFinalCall(c) && isAnsweredCall(c),
    sourceOf: (c) => ({ call_analysis: c.call_analysis, recording_url: c.recording_url }),
    analysisOf: analysisFromCall,
    recordingOf,
    stored: analyzed,
    fetch: async (apiKey, id) => (await client(apiKey).call.retrieve(id)) as unknown as RetellCallObject,
    retryAfterMs,
  };
}
