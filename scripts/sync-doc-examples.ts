// `npm run docs:examples`: copies every file under docs/examples/ into the markdown blocks that
// show it (see scripts/doc-examples.ts); edit the file, then run this.
import { markdownFiles, syncDoc } from './doc-examples.ts';

for (const doc of markdownFiles()) if (syncDoc(doc)) console.log(`updated ${doc}`);
