// What the tests of docs/examples/ share: the operations of a .graphql example by name, and a
// GraphQL request to a live server as a reader would send it.
import fs from 'node:fs';
import path from 'node:path';
import { parse, print, type OperationDefinitionNode } from 'graphql';
import { expect } from 'vitest';

const EXAMPLES = path.resolve(import.meta.dirname, '../../docs/examples');

/** Each operation of a .graphql example, on its own, by name. */
export function exampleOperations(file: string): Map<string, string> {
  const doc = parse(fs.readFileSync(path.join(EXAMPLES, file), 'utf8'));
  const ops = doc.definitions.filter((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition');
  return new Map(ops.map((op) => [op.name?.value ?? '', print(op)]));
}

/** POSTs a document to `${serverUrl}/graphql` with the key; the answer must carry no errors. */
export async function graphqlWithKey(serverUrl: string, key: string, query: string, variables: Record<string, unknown> = {}): Promise<any> {
  const res = await fetch(`${serverUrl}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as any;
  expect(body.errors).toBeUndefined();
  return body;
}
