// Yoga's parse and validation cache, bounded by what it holds rather than by entries. Its default
// keeps 1,024 documents and 1,024 parse errors keyed by their full text: 22 documents of a 40 MB
// comment killed the process, and 1,024 dense documents of 5,000 tokens (~1.2 MB of AST each)
// would hold over a GiB. Validation results are kept per cached document (a WeakMap in Yoga), so
// they go with it.
import type { DocumentNode, Token } from 'graphql';
import { LRUCache } from 'lru-cache';

/** Heap of a document's AST per token (its node, the token and their location), measured ~330-480 bytes. */
export const BYTES_PER_TOKEN = 512;
/** Heap of a parse error beside the text it keeps. */
const ERROR_BYTES = 1_024;
/** Parse errors get this share of the budget; one entry (document or error) at most an eighth of its cache. */
const ERROR_SHARE = 8;
const MAX_ENTRY_SHARE = 8;

/** Tokens a parsed document keeps, comments included (they are linked with the others). */
function tokenCount(document: DocumentNode): number {
  let n = 0;
  for (let t: Token | null | undefined = document.loc?.startToken; t; t = t.next) n++;
  return n;
}

/** Estimated heap of a cached text: UTF-16 at worst. */
const textBytes = (text: string) => 2 * text.length;

export interface ParseCaches {
  documentCache: LRUCache<string, DocumentNode>;
  errorCache: LRUCache<string, object>;
  validationCache: true;
}

/** Yoga's `parserAndValidationCache`, with documents and parse errors together within about `maxBytes`. */
export function boundedParseCaches(maxBytes: number): ParseCaches {
  const documentBytes = maxBytes - Math.floor(maxBytes / ERROR_SHARE);
  const errorBytes = maxBytes - documentBytes;
  return {
    documentCache: new LRUCache<string, DocumentNode>({
      maxSize: documentBytes,
      maxEntrySize: Math.floor(documentBytes / MAX_ENTRY_SHARE),
      sizeCalculation: (document, text) => textBytes(text) + BYTES_PER_TOKEN * Math.max(1, tokenCount(document)),
    }),
    errorCache: new LRUCache<string, object>({
      maxSize: errorBytes,
      maxEntrySize: Math.floor(errorBytes / MAX_ENTRY_SHARE),
      sizeCalculation: (_error, text) => textBytes(text) + ERROR_BYTES,
    }),
    validationCache: true,
  };
}
