import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kind, parse, type DocumentNode, type OperationDefinitionNode } from 'graphql';

const OPERATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'operations');

/**
 * Every REST route runs one named operation from operations/*.graphql. They are parsed once at
 * boot; each operation is stored with the fragments it may use.
 */
function loadOperations(): Map<string, DocumentNode> {
  const defs = fs
    .readdirSync(OPERATIONS_DIR)
    .filter((f) => f.endsWith('.graphql'))
    .sort()
    .flatMap((f) => parse(fs.readFileSync(path.join(OPERATIONS_DIR, f), 'utf8')).definitions);
  const fragments = defs.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION);
  const ops = new Map<string, DocumentNode>();
  for (const d of defs) {
    if (d.kind !== Kind.OPERATION_DEFINITION) continue;
    const name = (d as OperationDefinitionNode).name?.value;
    if (!name) throw new Error('REST operations must be named');
    ops.set(name, { kind: Kind.DOCUMENT, definitions: [d, ...fragments] });
  }
  return ops;
}

export const restOperations = loadOperations();
