import { DEFAULT_LOCALE, matchLocale, PSEUDO_LOCALE, type Locale } from '../src/i18n/locales.js'
import type english from '../src/i18n/catalogues/en/console.json'

// The console's words in the reader's language, from the same ICU MessageFormat catalogues as the
// e-mails and pages (src/i18n/catalogues/<locale>/console.json; the message `console.<key>`). The
// build makes each language's catalogue a chunk of its own (scripts/lib/console-build.ts), served
// like every other chunk under its hashed name; the app fetches the reader's one at start
// (loadLanguage), so a German reader downloads German words and no English ones.
//
// A message is formatted here by a small subset of ICU MessageFormat, enough for these catalogues:
// `{name}` and `{n, plural, one {…} other {…}}` / `{x, select, a {…} other {…}}` (with `#` and
// `=0`), nesting included. intl-messageformat 12 (with its parser) would add 8.9 kB of brotli to
// every first load (34 kB minified), more than a third of its 25 kB; this whole file, with the
// language matching and the chunks' names, is 0.8 kB.

export type WordKey = keyof typeof english
export type Words = Partial<Record<WordKey, string>>
type Values = Record<string, string | number>

/**
 * Each language's chunk: an import() each, so the build splits them apart. The build makes each
 * the catalogue's JSON text (scripts/lib/console-build.ts), which TypeScript sees as the object.
 */
const CHUNKS: Record<Exclude<Locale, typeof PSEUDO_LOCALE>, () => Promise<{ default: unknown }>> = {
  en: async () => await import('../src/i18n/catalogues/en/console.json'),
  de: async () => await import('../src/i18n/catalogues/de/console.json'),
  fr: async () => await import('../src/i18n/catalogues/fr/console.json'),
  es: async () => await import('../src/i18n/catalogues/es/console.json'),
  ja: async () => await import('../src/i18n/catalogues/ja/console.json'),
  ar: async () => await import('../src/i18n/catalogues/ar/console.json')
}

let words: Words = {}
let language: string = DEFAULT_LOCALE
let plurals = new Intl.PluralRules(language)

/**
 * The first of `tags` the console has words for (a member's locale, the workspace's, the
 * browser's), else English: its chunk fetched and its words used from now on; the locale (for
 * `<html lang dir>`, which the app sets). A failed fetch rejects and leaves the words as they were.
 */
export async function loadLanguage (tags: Array<string | null | undefined>): Promise<Locale> {
  const locale = tags.map(matchLocale).find(l => l !== null) ?? DEFAULT_LOCALE
  const catalogue = locale === PSEUDO_LOCALE ? 'en' : locale
  setWords(JSON.parse(String((await CHUNKS[catalogue]()).default)) as Words, catalogue)
  return locale
}

/** The words `t` reads from now on, in `reader`'s language (its plural rules, its numbers). */
export function setWords (catalogue: Words, reader: string): void {
  words = catalogue
  language = reader
  plurals = new Intl.PluralRules(reader)
}

/** `n` with `digits` decimals, as the reader's language writes it (1.07, 1,07). */
export function decimal (n: number, digits: number): string {
  return new Intl.NumberFormat(language, { minimumFractionDigits: digits, maximumFractionDigits: digits }).format(n)
}

/** The message's text from `at` to the `}` that closes its level; [text, where it ended]. */
function formatFrom (message: string, at: number, values: Values, count?: number): [string, number] {
  let out = ''
  let i = at
  while (i < message.length) {
    const c = message[i] ?? ''
    if (c === '}') return [out, i]
    if (c === '#' && count !== undefined) { out += String(count); i++; continue }
    if (c !== '{') { out += c; i++; continue }
    // An argument: {name} or {name, plural|select, key {…} key {…}}.
    const close = message.indexOf('}', i)
    const comma = message.indexOf(',', i)
    const name = message.slice(i + 1, comma !== -1 && comma < close ? comma : close).trim()
    const value = values[name] ?? ''
    if (comma === -1 || comma > close) { out += String(value); i = close + 1; continue }
    const kind = message.slice(comma + 1, message.indexOf(',', comma + 1)).trim()
    i = message.indexOf(',', comma + 1) + 1
    const n = Number(value)
    const want = kind === 'plural' ? [`=${n}`, plurals.select(n)] : [String(value)]
    let chosen: string | undefined
    let other = ''
    for (;;) {
      const open = message.indexOf('{', i)
      const key = message.slice(i, open).trim()
      const [text, end] = formatFrom(message, open + 1, values, kind === 'plural' ? n : count)
      if (chosen === undefined && want.includes(key)) chosen = text
      if (key === 'other') other = text
      i = end + 1
      while (message[i] === ' ') i++
      if (message[i] === '}') break
    }
    out += chosen ?? other
    i++
  }
  return [out, i]
}

/** The message `key` in the reader's language, with `values` filled in. */
export function t (key: WordKey, values: Values = {}): string {
  const message = words[key] ?? ''
  return formatFrom(message, 0, values)[0]
}

/**
 * The message `key` with elements (a link, a button, a path as code) where the language puts its
 * placeholders: `t('noScreenAt', …)` as text around `<code>`, never a sentence glued together.
 */
export function tParts<Part> (key: WordKey, parts: Record<string, Part>): Array<string | Part | undefined> {
  const marked = Object.fromEntries(Object.keys(parts).map(name => [name, `\u0000${name}\u0000`]))
  return t(key, marked).split('\u0000').map((text, i) => i % 2 === 1 ? parts[text] : text)
}
