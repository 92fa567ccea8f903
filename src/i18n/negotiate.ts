// Which language a page answers in (issue 54, item 2): the language of the link it was opened
// from (the invitation's, the invite link's, the sign-in link's account's), else the best match of
// the browser's Accept-Language, else the workspace's default, else English. A tag nobody has a
// catalogue for counts as not given, so the next source decides.
import { DEFAULT_LOCALE, matchLocale, type Locale } from './locales.js'

/** An Accept-Language value longer than this is not read (as the HTTP parsers cap headers anyway). */
const MAX_HEADER_LENGTH = 2_000
const Q_VALUE = /^q=(0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/i

/**
 * Accept-Language (RFC 9110 §12.5.4) as its tags, most preferred first: q-values honoured (a
 * tie keeps the header's order), q=0 and `*` dropped (a wildcard names no language to choose),
 * a malformed entry skipped rather than failing the whole header.
 */
export function parseAcceptLanguage (header: string | undefined): string[] {
  if (header === undefined || header.length > MAX_HEADER_LENGTH) return []
  const entries: Array<{ tag: string, q: number, at: number }> = []
  header.split(',').forEach((part, at) => {
    const [range = '', ...params] = part.trim().split(';').map(p => p.trim())
    if (!/^(?:[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*|\*)$/.test(range)) return
    let q = 1
    for (const param of params) {
      const m = Q_VALUE.exec(param)
      if (m === null) return
      q = Number(m[1])
    }
    if (q > 0 && range !== '*') entries.push({ tag: range, q, at })
  })
  return entries.sort((a, b) => b.q - a.q || a.at - b.at).map(e => e.tag)
}

/** What a page knows when it picks its language; each may be missing. */
export interface LocaleSources {
  /** The locale the link's invitation, invite link or account was made with. */
  link?: string | null | undefined
  /** The request's Accept-Language header. */
  acceptLanguage?: string | undefined
  /** The default locale of the workspace the page belongs to, when it knows one. */
  workspace?: string | null | undefined
}

/** The page's language: the link's, else Accept-Language's best match, else the workspace's, else English. */
export function negotiateLocale (sources: LocaleSources): Locale {
  const fromLink = matchLocale(sources.link)
  if (fromLink !== null) return fromLink
  for (const tag of parseAcceptLanguage(sources.acceptLanguage)) {
    const match = matchLocale(tag)
    if (match !== null) return match
  }
  return matchLocale(sources.workspace) ?? DEFAULT_LOCALE
}
