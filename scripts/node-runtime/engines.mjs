// Which Node versions package.json "engines.node" accepts, for the forms this project writes: `^X.Y.Z`,
// `>=X.Y.Z` or `X.Y.Z` alternatives joined by `||`. Dependency-free (not semver): .ci/node-bin runs it before
// `npm ci`, and the launcher runs it on whatever old Node a machine has. Anything else is refused loudly
// rather than guessed.

const ALTERNATIVE = /^(\^|>=)?(\d+)\.(\d+)\.(\d+)$/;

/** [major, minor, patch] of `v24.1.0`, `24.1.0` or `24.1.0-pre`. */
export function parseVersion(version) {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!m) throw new Error(`"${version}" is not a Node version`);
  return [Number(m[1]), Number(m[2]), Number(m[3])];
}

function compare(a, b) {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

/** The alternatives of an engines range, each `{ op: '^' | '>=' | '=', version: [major, minor, patch] }`. */
export function parseEngines(range) {
  return range.split('||').map((text) => {
    const alt = text.trim();
    const m = ALTERNATIVE.exec(alt);
    // ^0.Y.Z means something narrower than ^X.Y.Z; no Node release needs it.
    if (!m || (m[1] === '^' && m[2] === '0')) {
      throw new Error(`engines.node: "${alt}" is not one of ^X.Y.Z (X > 0), >=X.Y.Z or X.Y.Z`);
    }
    return { op: m[1] || '=', version: [Number(m[2]), Number(m[3]), Number(m[4])] };
  });
}

/** Whether a Node version (process.versions.node or `v…`) is within an engines range. */
export function satisfiesEngines(version, range) {
  const v = parseVersion(version);
  return parseEngines(range).some(({ op, version: min }) => {
    if (op === '=') return compare(v, min) === 0;
    if (op === '>=') return compare(v, min) >= 0;
    return v[0] === min[0] && compare(v, min) >= 0;
  });
}
