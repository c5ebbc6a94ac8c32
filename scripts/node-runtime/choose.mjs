// Which pinned Node replaces an unsupported one, and the one line that says so. Pure.
import { satisfiesEngines } from './engines.mjs';

/** The newest pinned line built for this platform and within engines, or null. `pins` newest first. */
export function choosePin({ range, pins, platform, arch }) {
  return pins.find((p) => p.os.includes(platform) && p.cpu.includes(arch) && satisfiesEngines(p.version, range)) || null;
}

/** `where`: the cache entry as shown; `installing`: whether it is being fetched now. */
export function pinnedNotice({ current, range, pin, where, installing }) {
  return (
    `Node v${current} is not supported here (supported: ${range}); running under Node v${pin.version} ` +
    `from the npm registry (${installing ? 'installing it once into' : 'cached in'} ${where})`
  );
}

export function noPinNotice({ current, range, platform, arch }) {
  return (
    `Node v${current} is not supported here (supported: ${range}) and no Node is pinned for ${platform}-${arch}: ` +
    `running under it anyway; install a supported Node`
  );
}

export function installFailedNotice({ current, pin, error }) {
  const reason = String(error && error.message ? error.message : error).split('\n')[0];
  return `could not install Node v${pin.version} (${reason}): running under Node v${current} anyway`;
}

/** Said at the end of `npm ci` on an unsupported Node, under the EBADENGINE warnings that npm prints for it. */
export function installNotice({ current, range, pin }) {
  return pin
    ? `Node v${current} is not supported here (supported: ${range}), hence npm's EBADENGINE warnings; npm start, ` +
        `npm test and the other scripts run under Node v${pin.version} from the npm registry (installed on first use)`
    : `Node v${current} is not supported here (supported: ${range}), hence npm's EBADENGINE warnings; install a supported Node`;
}
