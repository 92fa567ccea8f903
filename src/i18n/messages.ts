// Words in the reader's language: ICU MessageFormat catalogues, one folder per language under
// src/i18n/catalogues/ (<locale>/<namespace>.json, flat keys; a message's key is
// `<namespace>.<key>`). Plurals and selects live in the messages, never in code that glues words
// together. Each message is compiled once per language and time zone, then reused: an e-mail is
// rendered from cached formats, not parsed per send.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { IntlMessageFormat, type Formats } from 'intl-messageformat'
import { parse, TYPE, type MessageFormatElement } from '@formatjs/icu-messageformat-parser'
import { projectRoot } from '../paths.js'
import { DEFAULT_LOCALE, LOCALES, PSEUDO_LOCALE, type Locale } from './locales.js'

export const cataloguesDir = join(projectRoot, 'src', 'i18n', 'catalogues')

export type Catalogue = ReadonlyMap<string, string>
export type MessageValues = Record<string, string | number | boolean | Date | null | undefined>

/** A language's messages, `<namespace>.<key>` → ICU message, read from its folder. */
export function readCatalogue (locale: typeof LOCALES[number], dir = cataloguesDir): Catalogue {
  const messages = new Map<string, string>()
  const folder = join(dir, locale)
  for (const file of readdirSync(folder).filter(f => f.endsWith('.json')).sort()) {
    const namespace = file.slice(0, -'.json'.length)
    const entries = JSON.parse(readFileSync(join(folder, file), 'utf8')) as Record<string, unknown>
    for (const [key, message] of Object.entries(entries)) {
      if (typeof message !== 'string') throw new Error(`${locale}/${file}: ${key} is not a string`)
      messages.set(`${namespace}.${key}`, message)
    }
  }
  return messages
}

let catalogues: Map<string, Catalogue> | undefined
function catalogue (locale: Locale): Catalogue {
  catalogues ??= new Map(LOCALES.map(l => [l, readCatalogue(l)]))
  return catalogues.get(locale) ?? new Map()
}

const ACCENTED: Record<string, string> = {
  a: 'á', e: 'é', i: 'í', o: 'ó', u: 'ú', c: 'ç', n: 'ñ', y: 'ý', A: 'Á', E: 'É', I: 'Í', O: 'Ó', U: 'Ú', C: 'Ç', N: 'Ñ'
}
/** The pseudo-locale's text: every literal accented, placeholders and plural/select logic kept. */
function pseudo (elements: MessageFormatElement[]): MessageFormatElement[] {
  return elements.map(el => {
    if (el.type === TYPE.literal) return { ...el, value: el.value.replace(/[a-zA-Z]/g, c => ACCENTED[c] ?? c) }
    if (el.type === TYPE.plural || el.type === TYPE.select) {
      const options = Object.fromEntries(
        Object.entries(el.options).map(([k, o]) => [k, { ...o, value: pseudo(o.value) }]))
      return { ...el, options } as MessageFormatElement
    }
    if (el.type === TYPE.tag) return { ...el, children: pseudo(el.children) }
    return el
  })
}

/** Dates and times in a message (`{expiresAt, date, long}`) are written in the given time zone. */
function zonedFormats (timeZone: string): Partial<Formats> {
  const zoned = <T extends Record<string, Intl.DateTimeFormatOptions>>(formats: T) =>
    Object.fromEntries(Object.entries(formats).map(([name, f]) => [name, { ...f, timeZone }]))
  return {
    date: zoned(IntlMessageFormat.formats.date),
    time: zoned({
      ...IntlMessageFormat.formats.time,
      short: { hour: 'numeric', minute: 'numeric', timeZoneName: 'short' }
    })
  }
}

const compiled = new Map<string, IntlMessageFormat>()
function compile (locale: Locale, key: string, timeZone: string): IntlMessageFormat {
  const cacheKey = `${locale}\u0000${timeZone}\u0000${key}`
  let format = compiled.get(cacheKey)
  if (format !== undefined) return format
  // The pseudo-locale has no catalogue of its own: it is English, accented.
  const own = catalogue(locale).get(key)
  const english = catalogue(DEFAULT_LOCALE).get(key)
  const source = own ?? english
  if (source === undefined) throw new Error(`no message ${key}`)
  const ast = locale === PSEUDO_LOCALE ? pseudo(parse(source)) : parse(source)
  // A message the language lacks falls back to English, and is formatted as English.
  const formatLocale = locale === PSEUDO_LOCALE ? 'en' : own === undefined ? DEFAULT_LOCALE : locale
  format = new IntlMessageFormat(ast, formatLocale, zonedFormats(timeZone))
  compiled.set(cacheKey, format)
  return format
}

/**
 * The message `key` in `locale` with `values` filled in: plurals, selects, numbers and dates as
 * the language writes them, dates in `timeZone` (the workspace's; UTC unless given). The
 * pseudo-locale wraps the result in ⟦ ⟧ so a test sees any word that did not come from here.
 */
export function translate (locale: Locale, key: string, values: MessageValues = {}, timeZone = 'UTC'): string {
  const text = String(compile(locale, key, timeZone).format(values))
  return locale === PSEUDO_LOCALE ? `⟦${text}⟧` : text
}
