// Trusted (persisted) documents: the dashboard's operations by the sha256 of their text, built
// once per app. Yoga runs them by hash (src/graphql/yoga.ts); the dashboard bundle is given the
// hashes (src/http/dashboard.ts), so both sides hash the same printed document.
import { createHash } from 'node:crypto';
import type { DocumentNode } from 'graphql';
import { dashboardDocuments, documentSource, operationNameOf } from '../web/dashboard-documents.ts';

export interface TrustedDocuments {
  /** sha256 (hex) of the document text → the parsed document. */
  byHash: ReadonlyMap<string, DocumentNode>;
  /** Operation name → its hash, for the dashboard bundle. */
  idsByOperation: Readonly<Record<string, string>>;
}

/** Length of a sha256 hex digest: longer keys are refused before any lookup. */
export const TRUSTED_DOCUMENT_ID_LENGTH = 64;

export function trustedDocuments(documents: DocumentNode[] = dashboardDocuments()): TrustedDocuments {
  const byHash = new Map<string, DocumentNode>();
  const idsByOperation: Record<string, string> = {};
  for (const doc of documents) {
    const hash = createHash('sha256').update(documentSource(doc)).digest('hex');
    byHash.set(hash, doc);
    idsByOperation[operationNameOf(doc)!] = hash;
  }
  return { byHash, idsByOperation };
}
