// Runs a trusted document sent by hash (`extensions.persistedQuery.sha256Hash`, Apollo's form).
// Any client may still send document text (the API is public). A trusted document was parsed and
// validated against this schema at boot, so parse and validation are skipped for it; rate limits,
// authentication and the cost checks (query-cost.ts, before validation and again before
// execution) still run on it like on any other document.
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import { validate, type GraphQLSchema } from 'graphql';
import { TRUSTED_DOCUMENT_ID_LENGTH, type TrustedDocuments } from '../../http/trusted-documents.ts';

const notFound = () =>
  createGraphQLError('Unknown persisted document: send the document text, or the sha256 of one of the dashboard documents', {
    extensions: { code: 'PERSISTED_QUERY_NOT_FOUND', http: { status: 400 } },
  });

/** Throws at boot when a trusted document does not validate against the schema. */
function checkedAgainst(schema: GraphQLSchema, trusted: TrustedDocuments): TrustedDocuments {
  for (const [hash, doc] of trusted.byHash) {
    const errors = validate(schema, doc);
    if (errors.length) throw new Error(`Trusted document ${hash} does not validate: ${errors[0].message}`);
  }
  return trusted;
}

export function useTrustedDocuments(schema: GraphQLSchema, documents: TrustedDocuments): Plugin {
  const trusted = checkedAgainst(schema, documents);
  return usePersistedOperations({
    allowArbitraryOperations: true,
    skipDocumentValidation: true,
    getPersistedOperation: (key) => (key.length === TRUSTED_DOCUMENT_ID_LENGTH ? (trusted.byHash.get(key) ?? null) : null),
    customErrors: {
      notFound,
      keyNotFound: () =>
        createGraphQLError('Send a document (`query`) or a persisted document hash', { extensions: { code: 'BAD_REQUEST', http: { status: 400 } } }),
    },
  }) as Plugin;
}
