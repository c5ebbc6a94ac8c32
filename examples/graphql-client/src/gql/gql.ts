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
    "\n  query AccountAndAgents {\n    me { name }\n    agents { id name promptVersions { id name } }\n  }\n": typeof types.AccountAndAgentsDocument,
    "\n  query RecentBatches($limit: Int!) {\n    batches(limit: $limit) {\n      items { id status startMode acceptedContacts completed failed createdAt }\n      pagination { total }\n    }\n  }\n": typeof types.RecentBatchesDocument,
    "\n  mutation CreateManualBatch($input: CreateCallBatchInput!) {\n    createCallBatch(input: $input) { batchId status acceptedContacts rejectedContacts }\n  }\n": typeof types.CreateManualBatchDocument,
    "\n  mutation StartBatch($id: ID!) {\n    startBatch(id: $id) { id status }\n  }\n": typeof types.StartBatchDocument,
    "\n  subscription BatchProgress($batchId: ID!) {\n    batchProgress(batchId: $batchId) { status queued inProgress completed failed cancelled acceptedContacts }\n  }\n": typeof types.BatchProgressDocument,
};
const documents: Documents = {
    "\n  query AccountAndAgents {\n    me { name }\n    agents { id name promptVersions { id name } }\n  }\n": types.AccountAndAgentsDocument,
    "\n  query RecentBatches($limit: Int!) {\n    batches(limit: $limit) {\n      items { id status startMode acceptedContacts completed failed createdAt }\n      pagination { total }\n    }\n  }\n": types.RecentBatchesDocument,
    "\n  mutation CreateManualBatch($input: CreateCallBatchInput!) {\n    createCallBatch(input: $input) { batchId status acceptedContacts rejectedContacts }\n  }\n": types.CreateManualBatchDocument,
    "\n  mutation StartBatch($id: ID!) {\n    startBatch(id: $id) { id status }\n  }\n": types.StartBatchDocument,
    "\n  subscription BatchProgress($batchId: ID!) {\n    batchProgress(batchId: $batchId) { status queued inProgress completed failed cancelled acceptedContacts }\n  }\n": types.BatchProgressDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query AccountAndAgents {\n    me { name }\n    agents { id name promptVersions { id name } }\n  }\n"): typeof import('./graphql').AccountAndAgentsDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RecentBatches($limit: Int!) {\n    batches(limit: $limit) {\n      items { id status startMode acceptedContacts completed failed createdAt }\n      pagination { total }\n    }\n  }\n"): typeof import('./graphql').RecentBatchesDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateManualBatch($input: CreateCallBatchInput!) {\n    createCallBatch(input: $input) { batchId status acceptedContacts rejectedContacts }\n  }\n"): typeof import('./graphql').CreateManualBatchDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation StartBatch($id: ID!) {\n    startBatch(id: $id) { id status }\n  }\n"): typeof import('./graphql').StartBatchDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription BatchProgress($batchId: ID!) {\n    batchProgress(batchId: $batchId) { status queued inProgress completed failed cancelled acceptedContacts }\n  }\n"): typeof import('./graphql').BatchProgressDocument;


export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}
