/* eslint-disable */
import * as types from './graphql';



/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  query AccountAndAgents {\n    me {\n      name\n    }\n    agents {\n      id\n      name\n      promptVersions {\n        id\n        name\n      }\n    }\n  }\n": typeof types.AccountAndAgentsDocument,
    "\n  query RecentBatches($limit: Int!) {\n    batches(limit: $limit) {\n      items {\n        id\n        status\n        startMode\n        acceptedContacts\n        completed\n        failed\n        createdAt\n      }\n      pagination {\n        total\n      }\n    }\n  }\n": typeof types.RecentBatchesDocument,
    "\n  mutation CreateManualBatch($input: CreateCallBatchInput!) {\n    createCallBatch(input: $input) {\n      batchId\n      status\n      acceptedContacts\n      rejectedContacts\n    }\n  }\n": typeof types.CreateManualBatchDocument,
    "\n  mutation StartBatch($id: ID!) {\n    startBatch(id: $id) {\n      id\n      status\n    }\n  }\n": typeof types.StartBatchDocument,
    "\n  subscription BatchProgress($batchId: ID!) {\n    batchProgress(batchId: $batchId) {\n      status\n      queued\n      inProgress\n      completed\n      failed\n      cancelled\n      acceptedContacts\n    }\n  }\n": typeof types.BatchProgressDocument,
};
const documents: Documents = {
    "\n  query AccountAndAgents {\n    me {\n      name\n    }\n    agents {\n      id\n      name\n      promptVersions {\n        id\n        name\n      }\n    }\n  }\n": types.AccountAndAgentsDocument,
    "\n  query RecentBatches($limit: Int!) {\n    batches(limit: $limit) {\n      items {\n        id\n        status\n        startMode\n        acceptedContacts\n        completed\n        failed\n        createdAt\n      }\n      pagination {\n        total\n      }\n    }\n  }\n": types.RecentBatchesDocument,
    "\n  mutation CreateManualBatch($input: CreateCallBatchInput!) {\n    createCallBatch(input: $input) {\n      batchId\n      status\n      acceptedContacts\n      rejectedContacts\n    }\n  }\n": types.CreateManualBatchDocument,
    "\n  mutation StartBatch($id: ID!) {\n    startBatch(id: $id) {\n      id\n      status\n    }\n  }\n": types.StartBatchDocument,
    "\n  subscription BatchProgress($batchId: ID!) {\n    batchProgress(batchId: $batchId) {\n      status\n      queued\n      inProgress\n      completed\n      failed\n      cancelled\n      acceptedContacts\n    }\n  }\n": types.BatchProgressDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AccountAndAgents {\n    me {\n      name\n    }\n    agents {\n      id\n      name\n      promptVersions {\n        id\n        name\n      }\n    }\n  }\n"): typeof import('./graphql').AccountAndAgentsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RecentBatches($limit: Int!) {\n    batches(limit: $limit) {\n      items {\n        id\n        status\n        startMode\n        acceptedContacts\n        completed\n        failed\n        createdAt\n      }\n      pagination {\n        total\n      }\n    }\n  }\n"): typeof import('./graphql').RecentBatchesDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateManualBatch($input: CreateCallBatchInput!) {\n    createCallBatch(input: $input) {\n      batchId\n      status\n      acceptedContacts\n      rejectedContacts\n    }\n  }\n"): typeof import('./graphql').CreateManualBatchDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation StartBatch($id: ID!) {\n    startBatch(id: $id) {\n      id\n      status\n    }\n  }\n"): typeof import('./graphql').StartBatchDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription BatchProgress($batchId: ID!) {\n    batchProgress(batchId: $batchId) {\n      status\n      queued\n      inProgress\n      completed\n      failed\n      cancelled\n      acceptedContacts\n    }\n  }\n"): typeof import('./graphql').BatchProgressDocument;


export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}
