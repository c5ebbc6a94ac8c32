// The dashboard: one HTML page at `/` and `/dashboard`, its script and styles bundled from
// src/web/ by esbuild on first request and served from memory under content-hashed names (so the
// assets cache forever and the page revalidates). No build step: `npm start` serves it as is.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AppDeps } from '../deps.ts';
import { json } from './responses.ts';
import { FAVICON_LINK } from './favicon.ts';
import { assetOf, assetResponse, type Asset } from './static-asset.ts';

const WEB_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../web');
// The bundle's (virtual) output directory is the project root, so a source map names its sources
// relative to the project (`src/web/main.ts`), never by where the project was built or installed.
const PROJECT_DIR = path.resolve(WEB_DIR, '../..');
export const DASHBOARD_ASSETS = '/dashboard/assets/';

interface Bundle {
  page: Asset;
  assets: Map<string, Asset>;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

function page(script: string, style: string | undefined): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Call batches</title>
${FAVICON_LINK}
${style ? `<link rel="stylesheet" href="${style}">` : ''}
<style>${BOOT_STYLE}</style>
<script type="module" src="${script}"></script>
</head>
<body>
<noscript>The dashboard needs JavaScript.</noscript>
<div id="app"><p class="boot">Loading…</p><p class="boot boot-slow">This is taking long: the dashboard script did not start. <a href="">Reload the page</a>.</p></div>
</body>
</html>
`;
}

// Shown only if the script never replaces the boot screen (blocked or failed download): a page
// that says so instead of "Loading…" forever. CSS only, so it needs nothing that may have failed.
const BOOT_STYLE =
  '.boot{font:14px system-ui,sans-serif;color:#6b7280;text-align:center;padding:40px 20px 0}' +
  '.boot-slow{visibility:hidden;animation:boot-slow 0s 10s forwards}@keyframes boot-slow{to{visibility:visible}}';

/** The page when the bundle can't be built: HTML (a browser shows it), the API is unaffected. */
function unavailablePage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Dashboard unavailable</title>${FAVICON_LINK}<style>${BOOT_STYLE}</style></head>
<body><div class="boot"><h1>Dashboard unavailable</h1><p>The dashboard could not be prepared; the API keeps working. The server log says why. <a href="">Try again</a>.</p></div></body></html>
`;
}

/** `sourceMap`: DASHBOARD_SOURCE_MAP; off, the script carries no map and no link to one. */
async function build(documentIds: Readonly<Record<string, string>>, sourceMap: boolean): Promise<Bundle> {
  // Loaded on first use: processes that never serve the page never load esbuild.
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [path.join(WEB_DIR, 'main.ts')],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: ['chrome111', 'firefox115', 'safari16'],
    minify: true,
    sourcemap: sourceMap ? 'linked' : false,
    absWorkingDir: PROJECT_DIR,
    outdir: PROJECT_DIR,
    entryNames: 'app-[hash]',
    assetNames: '[name]-[hash]',
    logLevel: 'silent',
    legalComments: 'none',
    // The page sends its operations by these hashes (src/web/api.ts).
    define: { __DASHBOARD_DOCUMENT_IDS__: JSON.stringify(documentIds) },
  });
  const assets = new Map<string, Asset>();
  let script: string | undefined;
  let style: string | undefined;
  for (const f of result.outputFiles) {
    const name = path.basename(f.path);
    const ext = name.endsWith('.map') ? '.map' : path.extname(name);
    assets.set(name, assetOf(f.contents, TYPES[ext] ?? 'application/octet-stream'));
    if (ext === '.js') script = DASHBOARD_ASSETS + name;
    if (ext === '.css') style = DASHBOARD_ASSETS + name;
  }
  if (!script) throw new Error('dashboard bundle produced no script');
  return { page: assetOf(page(script, style), 'text/html; charset=utf-8'), assets };
}

export interface Dashboard {
  handles(pathname: string): boolean;
  serve(request: Request, pathname: string): Promise<Response>;
}

export function createDashboard(deps: Pick<AppDeps, 'logger' | 'config'>, documentIds: Readonly<Record<string, string>>): Dashboard {
  let bundle: Promise<Bundle> | undefined;
  const load = () => {
    // A failed build is not kept: the next request tries again (e.g. after fixing a source file).
    bundle ??= build(documentIds, deps.config.DASHBOARD_SOURCE_MAP).catch((err) => {
      bundle = undefined;
      throw err;
    });
    return bundle;
  };

  return {
    handles: (p) => p === '/' || p === '/dashboard' || p === '/dashboard/' || p.startsWith(DASHBOARD_ASSETS),
    async serve(request, p) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return json(405, { detail: 'Method Not Allowed' });
      let b: Bundle;
      try {
        b = await load();
      } catch (err) {
        deps.logger.error({ err }, 'dashboard bundle failed');
        if (p.startsWith(DASHBOARD_ASSETS)) return json(500, { detail: 'Dashboard unavailable' });
        return new Response(unavailablePage(), { status: 500, headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' } });
      }
      if (!p.startsWith(DASHBOARD_ASSETS)) return assetResponse(request, b.page, 'no-cache');
      const asset = b.assets.get(p.slice(DASHBOARD_ASSETS.length));
      if (!asset) return json(404, { detail: 'Not Found' });
      // Content-hashed names never change content.
      return assetResponse(request, asset, 'public, max-age=31536000, immutable');
    },
  };
}
