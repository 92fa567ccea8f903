import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import type { operations } from '../generated/openapi.js'
import { DEFAULT_ACCENT, escapeHtml } from '../lib/html.js'
import { projectRoot } from '../paths.js'

// The shell of every HTML page the service serves (the sign-in pages of src/auth/pages.ts, the
// console, the domain join pages): each response carries a fresh CSP nonce; only the script
// elements and the style that carry it run. A page before sign-in is written in its reader's
// language (`<html lang dir>`, Content-Language: src/i18n/page-words.ts makes the look from the
// reader) and, when it knows its workspace, in that workspace's look (name, logo, accent colour).

export interface Page { html: string, headers: Record<string, string> }

/** A workspace's look as a page applies it: the name it goes by, its logo's URL, its accent colour. */
export interface PageBranding { displayName: string, logoUrl: string | null, accentColor: string | null }

/** The page's language and, when the page knows its workspace, the workspace's look and time zone. */
export interface PageLook {
  /** The BCP 47 tag of the language the page is written in. */
  lang: string
  dir: 'ltr' | 'rtl'
  /** What the page shows of the workspace (src/workspaces/branding.ts gives it); null: not known. */
  branding: PageBranding | null
  /** The logo's alt text, in the page's language. */
  logoAlt: string
  timeZone: string
}

// Logical properties only (margin-inline, text-align: start): a right-to-left page mirrors by itself.
export const PAGE_STYLE = [
  `:root{--accent:${DEFAULT_ACCENT}}`,
  'body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin-block:3rem;margin-inline:auto;' +
    'padding-inline:1rem;color:#222}',
  'h1{font-size:1.5rem}label{display:block;margin-block:.75rem .25rem}' +
    'input{font:inherit;padding:.4rem;width:100%;box-sizing:border-box}',
  'button{font:inherit;margin-block-start:1rem;padding:.4rem 1rem;cursor:pointer;color:#fff;' +
    'background:var(--accent);border:1px solid var(--accent);border-radius:.25rem}' +
    'button:disabled{opacity:.6;cursor:default}.error{color:#b00020}.muted{color:#666}a{color:var(--accent)}',
  'button.link{margin:0;padding:0;border:0;background:none;color:var(--accent);text-decoration:underline;' +
    'text-align:start}',
  'dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem}dt{font-weight:600}[hidden]{display:none}',
  '.brand{display:flex;align-items:center;gap:.75rem;margin-block-end:1.5rem;font-weight:600}' +
    '.brand img{max-height:3rem;max-width:12rem}'
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

const ACCENT = /^#[0-9a-fA-F]{6}$/

/** The workspace's accent as the page's custom property (checked again: it goes into CSS). */
function accentStyle (branding: PageBranding | null | undefined): string {
  const accent = branding?.accentColor
  return accent != null && ACCENT.test(accent) ? `\n:root{--accent:${accent}}` : ''
}

/**
 * The workspace's name and logo above the page. The logo is the service's own file (img-src
 * 'self'): its path is used, so the page works on whichever of the service's origins serves it.
 */
function brandHeader (look: PageLook): string {
  const b = look.branding
  if (b == null) return ''
  const name = escapeHtml(b.displayName)
  if (b.logoUrl === null) return `<header class="brand"><span>${name}</span></header>\n`
  const src = escapeHtml(new URL(b.logoUrl, 'http://localhost').pathname)
  return `<header class="brand"><img src="${src}" alt="${escapeHtml(look.logoAlt)}"><span>${name}</span></header>\n`
}

/**
 * An HTML page under its own nonce: the style element (or the stylesheet link, for styles in a
 * file: `{ href }`) and whatever `body(nonce)` writes (its scripts) carry it. Every page links the
 * service's icon (browsers asked for /favicon.ico: 404). With a look, the page is in its language
 * (and says so in its headers) and carries the workspace's look; `words` are what its script shows,
 * handed over in a meta element (src: page-scripts/page-helpers.ts `word`).
 */
export function htmlPage (
  title: string, style: string | { href: string }, body: (nonce: string) => string,
  look?: PageLook, words?: Record<string, string>
): Page {
  const nonce = randomBytes(16).toString('base64')
  const styles = typeof style === 'string'
    ? `<style nonce="${nonce}">${style}${accentStyle(look?.branding)}</style>`
    : `<link rel="stylesheet" nonce="${nonce}" href="${escapeHtml(style.href)}">`
  const data = words === undefined
    ? ''
    : `<meta name="page-words" content="${escapeHtml(JSON.stringify({ words, timeZone: look?.timeZone ?? 'UTC' }))}">\n`
  const html = `<!doctype html>
<html lang="${escapeHtml(look?.lang ?? 'en')}" dir="${look?.dir ?? 'ltr'}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
${data}${styles}
</head>
<body>
${look === undefined ? '' : brandHeader(look)}${body(nonce)}
</body>
</html>
`
  const headers = pageHeaders(nonce)
  // A page in a negotiated language says which, and that another Accept-Language may get another.
  const language = look === undefined ? {} : { 'content-language': look.lang, vary: 'Accept-Language' }
  return { html, headers: { ...headers, ...language } }
}

export function layout (
  title: string, body: string, script: Exclude<PageScript, 'page-helpers.js' | 'console.js'>,
  look: PageLook, words: Record<string, string>
): Page {
  return htmlPage(title, PAGE_STYLE, nonce => `<main>${body}</main>
<script nonce="${nonce}" src="/assets/page-helpers.js"></script>
<script nonce="${nonce}" src="/assets/${script}"></script>`, look, words)
}
