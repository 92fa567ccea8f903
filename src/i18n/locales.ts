// The languages the service writes in, and how a BCP 47 tag someone gave (an invitation's
// `locale`, a member's, an Accept-Language entry) is matched to one of them. A tag is kept as
// given and matched when read: adding a language is then a catalogue, not a contract change.

/** The catalogues under src/i18n/catalogues/, English first (every other falls back to it). */
export const LOCALES = ['en', 'de', 'fr', 'es', 'ja', 'ar'] as const
/** A pseudo-locale for tests: English with every letter accented and each message bracketed. */
export const PSEUDO_LOCALE = 'en-XA'
export type Locale = typeof LOCALES[number] | typeof PSEUDO_LOCALE

export const DEFAULT_LOCALE: Locale = 'en'

const RIGHT_TO_LEFT = new Set(['ar', 'he', 'fa', 'ur'])

/** `rtl` for a right-to-left language, for `<html dir>` and an e-mail's `dir`. */
export function textDirection (locale: Locale): 'ltr' | 'rtl' {
  return RIGHT_TO_LEFT.has(locale.split('-')[0] ?? '') ? 'rtl' : 'ltr'
}

/**
 * The catalogue that serves `tag`, or null: the tag itself (case-insensitively), else its
 * language (`de-CH` → `de`). An ill-formed tag matches nothing.
 */
export function matchLocale (tag: string | null | undefined): Locale | null {
  if (typeof tag !== 'string' || tag === '') return null
  let canonical: string
  try {
    canonical = Intl.getCanonicalLocales(tag)[0] ?? ''
  } catch {
    return null
  }
  if (canonical.toLowerCase() === PSEUDO_LOCALE.toLowerCase()) return PSEUDO_LOCALE
  const exact = LOCALES.find(l => l === canonical)
  if (exact !== undefined) return exact
  const language = canonical.split('-')[0]
  return LOCALES.find(l => l === language) ?? null
}

/** Whether `tag` is a well-formed BCP 47 language tag (what the contract's `locale` takes). */
export function isLanguageTag (tag: string): boolean {
  try {
    return Intl.getCanonicalLocales(tag).length === 1
  } catch {
    return false
  }
}

/** Whether `timeZone` is an IANA time zone the runtime knows (`Europe/Berlin`, `UTC`). */
export function isTimeZone (timeZone: string): boolean {
  try {
    return new Intl.DateTimeFormat('en', { timeZone }).resolvedOptions().timeZone !== ''
  } catch {
    return false
  }
}
