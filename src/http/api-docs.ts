// The REST contract's OpenAPI document at /api/v1/openapi.json and its reference page at /docs,
// both public (the contract itself is no secret; no account data is in them). The page runs
// Redoc's standalone bundle from the installed `redoc` package, served by this process under a
// content-hashed name: nothing comes from another host. Built on first request and kept: the
// document once per app (~100 KB), the bundle read as text (~1 MB), never imported.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { addHashed, assetOf, assetResponse, loadOnce, serveHashed, type Asset } from './static-asset.ts';
import { json } from './responses.ts';
import { FAVICON_LINK } from './favicon.ts';

export const DOCS_PAGE = '/docs';
export const DOCS_ASSETS = '/docs/assets/';

// The one foreign reference in the bundle: the logo of its sidebar footer, on Redocly's CDN. The
// served copy shows a same-origin blank instead (the link text stays); a bundle without it fails loudly.
const FOREIGN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const BLANK_SVG = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E";

/** Redoc's options: offline (no search worker from a blob), the contract's statuses open. */
const REDOC_OPTIONS = {
  disableSearch: true,
  expandResponses: '200,201',
  hideHostname: true,
  jsonSampleExpandLevel: 3,
  sortPropsAlphabetically: false,
  theme: {
    typography: {
      fontFamily: 'system-ui, sans-serif',
      headings: { fontFamily: 'system-ui, sans-serif' },
      code: { fontFamily: 'ui-monospace, monospace' },
    },
  },
};

interface Docs {
  page: Asset;
  assets: Map<string, Asset>;
}

async function readBundle(): Promise<string> {
  const file = createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js');
  const text = await fs.promises.readFile(file, 'utf8');
  if (text.split(FOREIGN_LOGO).length !== 2) throw new Error(`${file}: expected exactly one reference to ${FOREIGN_LOGO}`);
  return text.replace(FOREIGN_LOGO, BLANK_SVG);
}

// No inline script: a revalidated page (304) gets a policy without script hashes
// (security-headers.ts), and Chromium merges it into the cached page, which would block one.
function page(scripts: string[], documentUrl: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Call batch service — REST API reference</title>
${FAVICON_LINK}
<style>body{margin:0}</style>
</head>
<body>
<noscript>The reference needs JavaScript; the document itself is at <a href="${documentUrl}">${documentUrl}</a>.</noscript>
<div id="redoc"></div>
${scripts.map((src) => `<script src="${src}"></script>`).join('\n')}
</body>
</html>
`;
}

const initScript = (documentUrl: string) =>
  `Redoc.init(${JSON.stringify(documentUrl)}, ${JSON.stringify(REDOC_OPTIONS)}, document.getElementById('redoc'));\n`;

async function loadDocs(documentUrl: string): Promise<Docs> {
  const assets = new Map<string, Asset>();
  const js = (text: string) => assetOf(text, 'text/javascript; charset=utf-8');
  const bundle = addHashed(assets, DOCS_ASSETS, 'redoc', '.js', js(await readBundle()));
  const init = addHashed(assets, DOCS_ASSETS, 'init', '.js', js(initScript(documentUrl)));
  return { page: assetOf(page([bundle, init], documentUrl), 'text/html; charset=utf-8'), assets };
}

export interface ApiDocs {
  handles(pathname: string): boolean;
  serve(request: Request, pathname: string): Promise<Response>;
}

/** `document` builds the OpenAPI document; it runs once, on the first request for it. */
export function createApiDocs(documentPath: string, document: () => unknown): ApiDocs {
  const openApi = loadOnce(async () => assetOf(JSON.stringify(document()), 'application/json; charset=utf-8'));
  const docs = loadOnce(() => loadDocs(documentPath));
  return {
    handles: (p) => p === documentPath || p === DOCS_PAGE || p === `${DOCS_PAGE}/` || p.startsWith(DOCS_ASSETS),
    async serve(request, p) {
      if (p.startsWith(DOCS_ASSETS)) return serveHashed(request, (await docs()).assets, DOCS_ASSETS, p);
      if (request.method !== 'GET' && request.method !== 'HEAD') return json(405, { detail: 'Method Not Allowed' });
      // Revalidated on every use (the ETag makes that a 304): a new deployment shows at once.
      if (p === documentPath) return assetResponse(request, await openApi(), 'no-cache');
      return assetResponse(request, (await docs()).page, 'no-cache');
    },
  };
}
