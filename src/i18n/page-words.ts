import { escapeHtml } from '../lib/html.js'
import type { PageBranding, PageLook } from '../http/page-shell.js'
import { textDirection, type Locale } from './locales.js'
import { translate, type MessageValues } from './messages.js'

// The words of the pages before sign-in (src/i18n/catalogues/<locale>/pages.json) as the pages
// write them: a page's look in its reader's language, a message as HTML around markup of the
// page's own, and the words a page hands its script (page-scripts/page-helpers.ts `word`).

/** Whom a page is written for: the language, and the workspace's look and time zone where known. */
export interface PageReader { locale: Locale, branding?: PageBranding | null, timeZone?: string }

/** The shell's look (src/http/page-shell.ts) for this reader: lang, direction, logo alt text. */
export function pageLook (reader: PageReader): PageLook {
  const branding = reader.branding ?? null
  return {
    lang: reader.locale,
    dir: textDirection(reader.locale),
    branding,
    logoAlt: branding === null ? '' : translate(reader.locale, 'pages.brand.logo', { workspace: branding.displayName }),
    timeZone: reader.timeZone ?? 'UTC'
  }
}

const SLOT = /\uE000(\w+)\uE001/g

/**
 * A message as HTML: its text escaped, and each placeholder named in `slots` replaced by that
 * markup (the page's own: an element the script fills, a link), so a sentence keeps the word order
 * of its language around the parts that are markup. Other values are text, escaped.
 */
export function messageHtml (
  locale: Locale, key: string, slots: Record<string, string> = {}, values: MessageValues = {}
): string {
  const marked = Object.fromEntries(Object.keys(slots).map(name => [name, `\uE000${name}\uE001`]))
  return escapeHtml(translate(locale, key, { ...values, ...marked }))
    .replace(SLOT, (whole, name: string) => slots[name] ?? whole)
}

/** What marks a placeholder the page's script fills: characters of Unicode's private use area. */
const OPEN = '\uE000'
const CLOSE = '\uE001'

/**
 * A message for a page's script: a marked placeholder (U+E000 name U+E001) left in place of each
 * of `names`, which the script fills (page-scripts/page-helpers.ts `word`); the rest of the values
 * formatted here. Not `{name}`: a value formatted here (a workspace's name) may hold `{email}`,
 * which the script would fill too; the markers are taken out of the values first.
 */
export function scriptWord (
  locale: Locale, key: string, names: readonly string[] = [], values: MessageValues = {}
): string {
  const plain = Object.fromEntries(Object.entries(values).map(([name, value]) =>
    [name, typeof value === 'string' ? value.replaceAll(OPEN, '').replaceAll(CLOSE, '') : value]))
  return translate(locale, key, { ...plain, ...Object.fromEntries(names.map(n => [n, `${OPEN}${n}${CLOSE}`])) })
}

/**
 * The words page-scripts/page-helpers.ts shows on every page: whose session continuing ends, and
 * an error answer's code in the reader's words (the API's `message` stays English, for programs).
 */
export function sharedScriptWords (locale: Locale): Record<string, string> {
  return {
    'session.signedIn': scriptWord(locale, 'pages.session.signedIn', ['email', 'workspace']),
    'session.signedInSwitch': scriptWord(locale, 'pages.session.signedInSwitch', ['email', 'workspace', 'next']),
    'error.TOKEN_INVALID': translate(locale, 'pages.error.TOKEN_INVALID'),
    'error.TOKEN_EXPIRED': translate(locale, 'pages.error.TOKEN_EXPIRED'),
    'error.TOKEN_USED': translate(locale, 'pages.error.TOKEN_USED'),
    'error.USER_EXISTS': translate(locale, 'pages.error.USER_EXISTS'),
    // Filled from the answer's details: the workspace and the connection that sign the address in.
    'error.SSO_REQUIRED': scriptWord(locale, 'pages.error.SSO_REQUIRED', ['workspace', 'connection']),
    'error.EMAIL_DOMAIN_NOT_ALLOWED': translate(locale, 'pages.error.EMAIL_DOMAIN_NOT_ALLOWED'),
    'error.VALIDATION_FAILED': translate(locale, 'pages.error.VALIDATION_FAILED'),
    'error.RATE_LIMITED': translate(locale, 'pages.error.RATE_LIMITED'),
    'error.NOT_FOUND': translate(locale, 'pages.error.NOT_FOUND'),
    'error.SETUP_COMPLETE': translate(locale, 'pages.error.SETUP_COMPLETE'),
    'error.CSRF_REJECTED': translate(locale, 'pages.error.CSRF_REJECTED'),
    'error.SERVICE_UNAVAILABLE': translate(locale, 'pages.error.SERVICE_UNAVAILABLE'),
    'error.generic': scriptWord(locale, 'pages.error.generic', ['status'])
  }
}
