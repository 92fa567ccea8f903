import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { projectRoot } from '../src/paths.js'
import type { FastifyReply } from 'fastify'
import type { HandlerDeps, HandlerGroup } from './types.js'

// The reference page's renderer ships inside @scalar/fastify-api-reference; we serve its
// standalone bundle through the contract instead of registering the plugin's own routes.
const SCALAR_BUNDLE = join(
  projectRoot, 'node_modules', '@scalar', 'fastify-api-reference', 'dist', 'js', 'standalone.js'
)

// The reference page's own CSP (replacing the API's `default-src 'none'`): Scalar's bundle from
// here, the contract fetched from here; the bundle injects its styles inline and draws icons as
// data: URLs. Nothing from another host: the page uses the system's fonts (withDefaultFonts:
// false, not Scalar's font host) and sends no telemetry.
const DOCS_CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; " +
  "img-src 'self' data:; font-src 'self' data:; base-uri 'none'; form-action 'none'; " +
  "frame-ancestors 'none'"

// Scalar's light theme, darkened to WCAG AA contrast (4.5:1 for its small text, on white and on
// its grey panels); the endpoint cards list every operation instead of scrolling inside a box,
// their long paths wrapped (/api/webhook-endpoints/{endpointId}/deliveries at 360 px); a section
// clips what its hidden hover controls would add to the page's width (no sideways scroll at 360
// or 1280 px); the who-may-call-it line of page-scripts/api-docs.ts.
const DOCS_CSS = `.light-mode {
  --scalar-color-1: #1b1b1b; --scalar-color-2: #4a4a4a; --scalar-color-3: #595959;
  --scalar-color-accent: #00599c; --scalar-color-blue: #00599c; --scalar-color-green: #0a6b3f;
  --scalar-color-orange: #9a3f00; --scalar-color-red: #b3141b; --scalar-color-yellow: #745a00;
  --scalar-color-purple: #5203d1;
}
/* The request cards are dark: their method labels in colours that reach 4.5:1 on them. */
.request-card.dark-mode {
  --scalar-color-red: #ff7b72; --scalar-color-blue: #79c0ff; --scalar-color-green: #56d364;
  --scalar-color-orange: #ffa657; --scalar-color-yellow: #e3b341; --scalar-color-purple: #d2a8ff;
}
.scalar-card-content.custom-scroll, .scalar-card-content .endpoints {
  max-height: none !important; overflow: visible !important;
}
.scalar-card-content .endpoint { min-width: 0; }
.scalar-card-content .endpoint-path { overflow-wrap: anywhere; white-space: normal; min-width: 0; }
.section-container { overflow-x: clip; }
.who-may { margin: .25rem 0 .75rem; font-size: .875rem; font-weight: 400; color: var(--scalar-color-2); }
.who-may code { font-size: .8125rem; }
.who-may.in-dialog { margin: 0; padding: .5rem .75rem; border-bottom: 1px solid var(--scalar-border-color); }`

export function metaHandlers (
  { contract, config }: HandlerDeps
): HandlerGroup<'getOpenapiJson' | 'getDocs' | 'getDocsScript'> {
  const json = JSON.stringify(contract)
  const page = docsPage(config.publicUrl)
  let script: Buffer | undefined
  return {
    async getDocsScript (_request, reply) {
      script ??= readFileSync(SCALAR_BUNDLE)
      return await reply.type(
        'application/javascript; charset=utf-8'
      ).header('cache-control', 'public, max-age=86400').code(200).send(script)
    },
    async getOpenapiJson (_request, reply) {
      // Serialized once at start: the declared body is the contract object, sent as its JSON text.
      return await (reply as FastifyReply).type(
        'application/json; charset=utf-8'
      ).header('cache-control', 'no-cache').send(json)
    },
    async getDocs (_request, reply) {
      return await reply.type('text/html; charset=utf-8').header('content-security-policy', DOCS_CSP)
        .code(200).send(page)
    }
  }
}

/**
 * The reference page. Its Test Request button sends to this service (PUBLIC_URL) and not to the
 * contract's first example server (http://localhost:3000), so the request is same-origin and
 * carries the browser's session cookie on any port or host. No request leaves for another host.
 * Held to axe (docs/clients.md): the search box, client-library picker and dark-mode toggle are
 * off (their markup fails it), the theme is DOCS_CSS, and /assets/api-docs.js repairs the rest.
 */
function docsPage (publicUrl: string): string {
  const configuration = JSON.stringify({
    servers: [{ url: publicUrl, description: 'this service' }],
    withDefaultFonts: false,
    telemetry: false,
    hideSearch: true,
    hiddenClients: true,
    hideClientButton: true,
    forceDarkModeState: 'light',
    hideDarkModeToggle: true,
    // The renderer's toolbar (Share, Generate SDKs, Configure) on a loopback address: not ours to offer.
    showDeveloperTools: 'never',
    customCss: DOCS_CSS
  })
    .replace(/&/g, '&amp;').replace(/'/g, '&#39;')
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Workspace Service API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="/favicon.svg" type="image/svg+xml"></head>
<body>
<script id="api-reference" data-url="/api/openapi.json" data-configuration='${configuration}'></script>
<script src="/api/docs/standalone.js"></script>
<script src="/assets/api-docs.js"></script>
</body>
</html>`
}
