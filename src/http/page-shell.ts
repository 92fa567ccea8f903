import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import type { operations } from '../generated/openapi.js'
import { escapeHtml } from '../lib/html.js'
import { projectRoot } from '../paths.js'

// The shell of every HTML page the service serves (the sign-in pages of src/auth/pages.ts, the
// console, the domain join pages): each response carries a fresh CSP nonce; only the script
// elements and the style that carry it run.

export interface Page { html: string, headers: Record<string, string> }

export const PAGE_STYLE = [
  'body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#222}',
  'h1{font-size:1.5rem}label{display:block;margin:.75rem 0 .25rem}' +
    'input{font:inherit;padding:.4rem;width:100%;box-sizing:border-box}',
  'button{font:inherit;margin-top:1rem;padding:.4rem 1rem;cursor:pointer}.error{color:#b00020}.muted{color:#666}',
  'button.link{margin:0;padding:0;border:0;background:none;color:#0645ad;text-decoration:underline}',
  'dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem}dt{font-weight:600}[hidden]{display:none}'
].join('\n')

// The pages' scripts are TypeScript files in page-scripts/ (linted, type-checked against the
// contract's types), compiled by the console's build into dist/page-scripts/ and served by
// getPageScript. Each page loads the shared helpers, then its own script, both with the nonce.
export type PageScript = operations['getPageScript']['parameters']['path']['script']
export const pageScriptsDir = join(projectRoot, 'dist', 'page-scripts')

/** The headers of every HTML page: its CSP, which lets run only what carries this response's nonce. */
function pageHeaders (nonce: string): Record<string, string> {
  return {
    'content-security-policy': [
      "default-src 'none'", `script-src 'nonce-${nonce}'`, `style-src 'nonce-${nonce}'`, "connect-src 'self'",
      "img-src 'self'", "form-action 'self'", "base-uri 'none'", "frame-ancestors 'none'"
    ].join('; '),
    // The signup and login URLs carry tokens: never send them onwards, never cache the page.
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store'
    // nosniff, X-Frame-Options and the rest: on every response (src/plugins/helmet.ts).
  }
}

/**
 * An HTML page under its own nonce: the style element (or the stylesheet link, for styles in a
 * file: `{ href }`) and whatever `body(nonce)` writes (its scripts) carry it. Every page links the
 * service's icon (browsers asked for /favicon.ico: 404).
 */
export function htmlPage (title: string, style: string | { href: string }, body: (nonce: string) => string): Page {
  const nonce = randomBytes(16).toString('base64')
  const styles = typeof style === 'string'
    ? `<style nonce="${nonce}">${style}</style>`
    : `<link rel="stylesheet" nonce="${nonce}" href="${escapeHtml(style.href)}">`
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
${styles}
</head>
<body>
${body(nonce)}
</body>
</html>
`
  return { html, headers: pageHeaders(nonce) }
}

export function layout (
  title: string, body: string, script: Exclude<PageScript, 'page-helpers.js' | 'console.js'>
): Page {
  return htmlPage(title, PAGE_STYLE, nonce => `${body}
<script nonce="${nonce}" src="/assets/page-helpers.js"></script>
<script nonce="${nonce}" src="/assets/${script}"></script>`)
}
