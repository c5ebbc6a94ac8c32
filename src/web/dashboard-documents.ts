// The dashboard's operations (src/web/operations/dashboard.graphql, typed by codegen), which the
// server serves as trusted documents: the page sends an operation's hash instead of its text.
// Server-side only; the page itself gets just the hashes (src/http/dashboard.ts defines them).
import { Kind, print, type DocumentNode } from 'graphql';
import * as generated from '../codegen/graphql.ts';

/** The operation's name, or undefined for a document without a named operation. */
export function operationNameOf(doc: DocumentNode): string | undefined {
  for (const d of doc.definitions) if (d.kind === Kind.OPERATION_DEFINITION) return d.name?.value;
  return undefined;
}

/** The text a document is hashed and sent as: graphql-js's print of the codegen document. */
export const documentSource = (doc: DocumentNode): string => print(doc);

/** Every `Dashboard…` operation document codegen emitted (with the fragments it spreads). */
export function dashboardDocuments(): DocumentNode[] {
  return Object.values(generated as Record<string, unknown>).filter(
    (v): v is DocumentNode =>
      typeof v === 'object' &&
      v !== null &&
      (v as DocumentNode).kind === Kind.DOCUMENT &&
      !!operationNameOf(v as DocumentNode)?.startsWith('Dashboard'),
  );
}
