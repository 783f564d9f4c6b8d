import Fastify from 'fastify';
import type { FastifyReply } from 'fastify';
import type { ServiceContext } from '../../service-context.js';
import type { AppInstance } from '../http/http-app.js';

/**
 * GET /docs: the API reference, rendered in the browser by Scalar from GET /v1/openapi.json.
 * Everything is served by this server: the page, and Scalar's bundle from node_modules at
 * /docs/assets/scalar.js. Default fonts, telemetry and the AI/MCP features are off, and the page's
 * Content-Security-Policy keeps the browser from loading anything from another host.
 */

const publicHidden = { config: { access: { scope: 'public' as const } }, schema: { hide: true } };

export const docsScriptPath = '/docs/assets/scalar.js';

/** Try-it requests may go to the documented servers; nothing else leaves this origin. */
const contentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self' http://127.0.0.1:8080",
  "worker-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const scalarConfiguration = {
  url: '/v1/openapi.json',
  cdn: docsScriptPath,
  pageTitle: 'Merchant Wallet API reference',
  /** Anchors read `#merchant-wallet-api/...`; the document's description links to them. */
  slug: 'merchant-wallet-api',
  withDefaultFonts: false,
  telemetry: false,
  showDeveloperTools: 'never',
  agent: { disabled: true },
  mcp: { disabled: true },
  defaultOpenAllTags: true,
  documentDownloadType: 'json',
  persistAuth: false,
} as const;

interface DocsAssets {
  html: string;
  script: string;
}

/**
 * Scalar's Fastify plugin registers routes without our access declarations (which the public app
 * would wire to 403), so it runs once on a private instance that is never listening: its page and
 * its bundled script are taken from there and served by our own routes below.
 */
async function renderAssets(): Promise<DocsAssets> {
  const { default: scalar } = await import('@scalar/fastify-api-reference');
  const scratch = Fastify({ logger: false });
  try {
    await scratch.register(scalar, { routePrefix: '/docs', configuration: scalarConfiguration as any });
    const page = await scratch.inject({ method: 'GET', url: '/docs/' });
    const script = await scratch.inject({ method: 'GET', url: '/docs/js/scalar.js' });
    if (page.statusCode !== 200 || script.statusCode !== 200) {
      throw new Error(`Scalar assets unavailable: page ${page.statusCode}, script ${script.statusCode}`);
    }
    if (!page.body.includes(`src="${docsScriptPath}"`)) throw new Error('Scalar page does not load the local bundle');
    // An empty icon: the browser would otherwise ask for /favicon.ico.
    const html = page.body.replace('<head>', '<head>\n    <link rel="icon" href="data:," />');
    return { html, script: script.body };
  } finally {
    await scratch.close();
  }
}

let assets: Promise<DocsAssets> | undefined;

/** Loaded on the first request (the bundle is 4 MB), then kept; a failure is retried next time. */
function docsAssets(): Promise<DocsAssets> {
  assets ??= renderAssets().catch((err: unknown) => {
    assets = undefined;
    throw err;
  });
  return assets;
}

function common(reply: FastifyReply): FastifyReply {
  return reply.header('x-content-type-options', 'nosniff').header('referrer-policy', 'no-referrer');
}

export async function registerDocsPage(app: AppInstance, _ctx: ServiceContext): Promise<void> {
  app.get('/docs', publicHidden, async (_req, reply) => {
    const { html } = await docsAssets();
    return common(reply)
      .type('text/html; charset=utf-8')
      .header('content-security-policy', contentSecurityPolicy)
      .header('cache-control', 'no-cache')
      .send(html);
  });

  app.get(docsScriptPath, publicHidden, async (_req, reply) => {
    const { script } = await docsAssets();
    return common(reply)
      .type('application/javascript; charset=utf-8')
      .header('cache-control', 'public, max-age=3600')
      .send(script);
  });
}
