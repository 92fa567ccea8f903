/// <reference path="./language-chunks.d.ts" />
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
export type Words = Partial<Record<string, string>>
type Values = Record<string, string | number>
/** A language's chunk (language-chunks.d.ts). */
type LanguageChunk = typeof import('console-words:en')
/** The words a screen may name: the shell's, and its own (its catalogue's English, `Own`). */
export type ScreenWordKey<Own> = WordKey | (keyof Own & string)

/**
 * Each language's chunk: an import() each, so the build splits them apart. The build makes each
 * (scripts/lib/console-build.ts, `console-words:<locale>`) the shell's words, console.json, as its
 * JSON text, and a table of that language's screens' words (console-<screen>.json), a chunk each:
 * a language's table is in its own chunk, not twelve screens times six languages in the shell's.
 */
const CHUNKS: Record<Exclude<Locale, typeof PSEUDO_LOCALE>, () => Promise<LanguageChunk>> = {
  en: async () => await import('console-words:en'),
  de: async () => await import('console-words:de'),
  fr: async () => await import('console-words:fr'),
  es: async () => await import('console-words:es'),
  ja: async () => await import('console-words:ja'),
  ar: async () => await import('console-words:ar')
}

let words: Words = {}
let language: string = DEFAULT_LOCALE
let plurals = new Intl.PluralRules(language)
let numbers = new Intl.NumberFormat(language)
/** The reader's language's chunk, once loaded: its screens' words are fetched through it. */
let chunk: LanguageChunk | undefined
/**
 * Each screen's own words, by screen, with the language's chunk they came from (read again when
 * a language is chosen later), apart from the shell's and each other's: two catalogues may use
 * one key (a screen's `signedInAs` is not the shell's), and the screen's own wins for that screen.
 */
const screenWordsLoaded = new Map<string, { from: LanguageChunk, words: Words }>()
/** loadLanguage's calls, one after the other: the last asked for is the one that stays. */
let languageQueue: Promise<unknown> = Promise.resolve()

/**
 * The first of `tags` the console has words for (a member's locale, the workspace's, the
 * browser's), else English: its chunk fetched and its words used from now on; the locale (for
 * `<html lang dir>`, which the app sets). A failed fetch rejects and leaves the words as they were.
 */
export async function loadLanguage (tags: Array<string | null | undefined>): Promise<Locale> {
  const next = languageQueue.then(async () => await switchLanguage(tags))
  languageQueue = next.catch(() => {})
  return await next
}

async function switchLanguage (tags: Array<string | null | undefined>): Promise<Locale> {
  const locale = tags.map(matchLocale).find(l => l !== null) ?? DEFAULT_LOCALE
  const catalogue = locale === PSEUDO_LOCALE ? 'en' : locale
  const loaded = await CHUNKS[catalogue]()
  // The screens' words in the new language, before the language changes: none is left in the old.
  const screens = await Promise.all([...screenWordsLoaded.keys()].map(async screen =>
    [screen, await screenWords(loaded, screen)] as const))
  setWords(JSON.parse(loaded.default) as Words, catalogue)
  chunk = loaded
  for (const [screen, own] of screens) screenWordsLoaded.set(screen, { from: loaded, words: own })
  // A screen whose words arrived meanwhile, in the old language: again, in the new.
  await Promise.all([...screenWordsLoaded].filter(([, e]) => e.from !== loaded).map(async ([screen]) => { await loadScreenWords(screen) }))
  return locale
}

/** `screen`'s own words in the language of `from` (none: the screen has no catalogue). */
async function screenWords (from: LanguageChunk, screen: string): Promise<Words> {
  const load = from.screens[screen]
  return load === undefined ? {} : JSON.parse((await load()).default) as Words
}

/**
 * Fetch `screen`'s own words (src/i18n/catalogues/<locale>/console-<screen>.json) in the reader's
 * language, beside the screen's chunk (hooks/use-screen.ts; routes.ts names each screen's).
 */
export async function loadScreenWords (screen: string): Promise<void> {
  for (;;) {
    const from = chunk
    if (from === undefined || screenWordsLoaded.get(screen)?.from === from) return
    const own = await screenWords(from, screen)
    // A language chosen meanwhile: this screen's words again, in that language.
    if (from === chunk) {
      screenWordsLoaded.set(screen, { from, words: own })
      return
    }
  }
}

/** Whether a language's words are here (none before the first loadLanguage). */
export const hasLanguage = (): boolean => chunk !== undefined

/** The words `t` reads from now on, in `reader`'s language (its plural rules, its numbers). */
export function setWords (catalogue: Words, reader: string): void {
  words = catalogue
  language = reader
  plurals = new Intl.PluralRules(reader)
  numbers = new Intl.NumberFormat(reader)
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
    if (c === '#' && count !== undefined) { out += numbers.format(count); i++; continue }
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

/** The reader's language, as `Intl` takes it (dates, numbers). */
export const readerLanguage = (): string => language

type Translate<Key> = (key: Key, values?: Values) => string
type TranslateParts<Key> = <Part>(key: Key, parts: Record<string, Part | number>) => Array<string | Part | number | undefined>

/** `t` over the words of `screen` (its own first) and the shell's; only the shell's without one. */
function translator (screen?: string): Translate<string> {
  return (key, values = {}) => {
    const own = screen === undefined ? undefined : screenWordsLoaded.get(screen)?.words[key]
    return formatFrom(own ?? words[key] ?? '', 0, values)[0]
  }
}

/**
 * `tParts` over `translate`: the message `key` with elements (a link, a button, a path as code)
 * where the language puts its placeholders, never a sentence glued together. A number or a string
 * is a plain value (a plural's count, a select's choice, a name), formatted into the text.
 */
function partsOf (translate: Translate<string>): TranslateParts<string> {
  return (key, parts) => {
    const marked = Object.fromEntries(Object.entries(parts).map(([name, part]) =>
      [name, typeof part === 'number' || typeof part === 'string' ? part : `\u0000${name}\u0000`]))
    return translate(key, marked).split('\u0000').map((text, i) => i % 2 === 1 ? parts[text] : text)
  }
}

const shell = translator()

/** The shell's message `key` in the reader's language, with `values` filled in. */
export const t: Translate<WordKey> = shell

/** The shell's message `key` around elements: `tParts('noScreenAt', { path: <code>…</code> })`. */
export const tParts: TranslateParts<WordKey> = partsOf(shell)

/**
 * `t` and `tParts` for `screen`: its own words (console-<screen>.json) and the shell's, typed by
 * its English catalogue (`import type own from '…/en/console-<screen>.json'`;
 * `screenWordsOf<typeof own>('<screen>')`), so a key of another screen's catalogue (not fetched
 * with this one) fails the typecheck, and another screen's same key is never read.
 */
export function screenWordsOf<Own> (screen: string): {
  t: Translate<ScreenWordKey<Own>>
  tParts: TranslateParts<ScreenWordKey<Own>>
  /** Whether the message is here (its catalogue fetched), where `t` would give ''. */
  has: (key: ScreenWordKey<Own>) => boolean
} {
  const translate = translator(screen)
  const has = (key: string): boolean => (screenWordsLoaded.get(screen)?.words[key] ?? words[key]) !== undefined
  return { t: translate, tParts: partsOf(translate), has }
}
