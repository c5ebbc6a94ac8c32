// `npm run schema:print`: writes the SDL that the committed schema.graphql must equal.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { printedSchema } from './schema.ts';

const target = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../schema.graphql');
fs.writeFileSync(target, printedSchema());
console.log(`wrote ${target}`);
