// `npm run schema:print` (after the SDL): writes the REST documents' generated fragment.
import fs from 'node:fs';
import { BATCH_OPTIONS_FRAGMENT_FILE, batchOptionsFragment } from './batch-options-fragment.ts';

fs.writeFileSync(BATCH_OPTIONS_FRAGMENT_FILE, batchOptionsFragment());
console.log(`wrote ${BATCH_OPTIONS_FRAGMENT_FILE}`);
