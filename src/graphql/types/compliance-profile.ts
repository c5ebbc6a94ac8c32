// Compliance profiles (domain/compliance/rules-v1.ts) as a GraphQL enum, on accounts and batches.
import { builder } from '../builder.ts';
import { PROFILE_DESCRIPTIONS, type ComplianceProfile } from '../../domain/compliance/rules-v1.ts';

export const ComplianceProfileEnum = builder.enumType('ComplianceProfile', {
  description: 'A set of calling rules (docs/campaigns.md "Compliance profiles"); the most restrictive rule wins',
  values: {
    // Named as on REST (the REST facade passes its values through): lower case, like CallBatchStartMode.
    us_tcpa: { value: 'us_tcpa', description: PROFILE_DESCRIPTIONS.us_tcpa },
    us_states: { value: 'us_states', description: PROFILE_DESCRIPTIONS.us_states },
    us_federal_holidays: { value: 'us_federal_holidays', description: PROFILE_DESCRIPTIONS.us_federal_holidays },
  } satisfies Record<string, { value: ComplianceProfile; description: string }>,
});
