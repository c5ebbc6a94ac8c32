// GraphiQL served from the installed @graphql-yoga/render-graphiql package, never from a CDN: the
// page is small and names its script, styles and Monaco editor workers under /graphiql/assets/ by
// content hash (they cache forever; the page revalidates). Loaded on first use: the bundle is ~9 MB
// that a process serving no GraphiQL page never holds.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { GraphiQLOptions } from 'graphql-yoga';
import { addHashed, assetOf, loadOnce, serveHashed, type Asset } from './static-asset.ts';

export const GRAPHIQL_ASSETS = '/graphiql/assets/';

interface Bundle {
  assets: Map<string, Asset>;
  /** Asset path by role: icon, script, style and one per editor worker label. */
  urls: { icon: string; script: string; style: string; workers: Record<string, string> };
}

const BUNDLE_EXPORTS = ['js', 'css', 'favicon', 'editorWorkerService', 'jsonWorker', 'graphqlWorker'] as const;
type Bundled = Record<(typeof BUNDLE_EXPORTS)[number], string>;

/**
 * The string constants of the package's bundle module (not a public entry point), one JSON-safe
 * literal per line. Read as text rather than imported: compiling a 9 MB module costs ~130 MB of
 * memory, reading its literals ~30 MB.
 */
async function readBundle(): Promise<Bundled> {
  const file = path.join(path.dirname(createRequire(import.meta.url).resolve('@graphql-yoga/render-graphiql')), 'graphiql.js');
  const found: Partial<Bundled> = {};
  for (const line of (await fs.promises.readFile(file, 'utf8')).split('\n')) {
    const m = /^(?:export const |exports\.)(\w+) = (".*");?\s*$/.exec(line);
    if (m && (BUNDLE_EXPORTS as readonly string[]).includes(m[1])) found[m[1] as keyof Bundled] = JSON.parse(m[2]) as string;
  }
  const missing = BUNDLE_EXPORTS.filter((k) => typeof found[k] !== 'string');
  if (missing.length) throw new Error(`GraphiQL bundle ${file} lacks ${missing.join(', ')}`);
  return found as Bundled;
}

const JS = 'text/javascript; charset=utf-8';

async function load(): Promise<Bundle> {
  const mod = await readBundle();
  const assets = new Map<string, Asset>();
  const add = (stem: string, ext: string, content: string | Uint8Array, type: string) =>
    addHashed(assets, GRAPHIQL_ASSETS, stem, ext, assetOf(content, type));
  // The icon comes as a data: URL of ~150 KB; as a file it is fetched once, not sent with every page.
  const icon = Buffer.from(mod.favicon.slice(mod.favicon.indexOf(',') + 1), 'base64');
  return {
    assets,
    urls: {
      icon: add('favicon', '.ico', icon, 'image/x-icon'),
      script: add('graphiql', '.js', mod.js, JS),
      style: add('graphiql', '.css', mod.css, 'text/css; charset=utf-8'),
      workers: {
        editorWorkerService: add('editor-worker', '.js', mod.editorWorkerService, JS),
        json: add('json-worker', '.js', mod.jsonWorker, JS),
        graphql: add('graphql-worker', '.js', mod.graphqlWorker, JS),
      },
    },
  };
}

/** JSON inside a <script> element: `<` escaped so no value can close the element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');
const escapeHtml = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

function page(b: Bundle, opts: GraphiQLOptions): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(opts.title ?? 'GraphiQL')}</title>
<link rel="icon" href="${b.urls.icon}">
<link rel="stylesheet" href="${b.urls.style}">
</head>
<body id="body" class="no-focus-outline">
<noscript>GraphiQL needs JavaScript.</noscript>
<div id="root"></div>
<script>self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: (_id, label) => (${scriptJson(b.urls.workers)})[label] };</script>
<script src="${b.urls.script}"></script>
<script>YogaGraphiQL.renderYogaGraphiQL(document.querySelector('#root'), ${scriptJson(opts)});</script>
</body>
</html>
`;
}

export interface Graphiql {
  /** Yoga's renderGraphiQL. */
  render(opts: GraphiQLOptions): Promise<string>;
  handles(pathname: string): boolean;
  serve(request: Request, pathname: string): Promise<Response>;
}

export function createGraphiql(): Graphiql {
  const loaded = loadOnce(load);

  return {
    render: async (opts) => page(await loaded(), opts),
    handles: (p) => p.startsWith(GRAPHIQL_ASSETS),
    async serve(request, p) {
      // A worker runs under its own response's policy.
      return serveHashed(request, (await loaded()).assets, GRAPHIQL_ASSETS, p, { 'content-security-policy': "default-src 'self'" });
    },
  };
}
