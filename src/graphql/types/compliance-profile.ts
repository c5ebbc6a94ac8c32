// Compliance profiles (domain/compliance/rules-v1.ts) as a GraphQL enum, on accounts and batches.
import { builder } from '../builder.ts';
import { PROFILE_DESCRIPTIONS, type ComplianceProfile } from '../../domain/compliance/rules-v1.ts';

export const ComplianceProfileEnum = builder.enumType('ComplianceProfile', {
  description: 'A set of calling rules (docs/campaigns.md "Compliance profiles"); the most restrictive rule wins',
  values: {
    US_TCPA: { value: 'us_tcpa', description: PROFILE_DESCRIPTIONS.us_tcpa },
    US_STATES: { value: 'us_states', description: PROFILE_DESCRIPTIONS.us_states },
    US_FEDERAL_HOLIDAYS: { value: 'us_federal_holidays', description: PROFILE_DESCRIPTIONS.us_federal_holidays },
  } satisfies Record<string, { value: ComplianceProfile; description: string }>,
});
