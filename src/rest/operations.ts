import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kind, parse, separateOperations, type DocumentNode } from 'graphql';

const OPERATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'operations');

/**
 * Every REST route runs one named operation from operations/*.graphql. They are parsed once at
 * boot; each operation is stored with the fragments it uses (graphql-js `separateOperations`), so
 * the document is valid on its own, for the router and for clients that send it over HTTP.
 */
function loadOperations(): Map<string, DocumentNode> {
  const definitions = fs
    .readdirSync(OPERATIONS_DIR)
    .filter((f) => f.endsWith('.graphql'))
    .sort()
    .flatMap((f) => parse(fs.readFileSync(path.join(OPERATIONS_DIR, f), 'utf8')).definitions);
  for (const d of definitions) {
    if (d.kind === Kind.OPERATION_DEFINITION && !d.name) throw new Error('REST operations must be named');
  }
  return new Map(Object.entries(separateOperations({ kind: Kind.DOCUMENT, definitions })));
}

export const restOperations = loadOperations();
