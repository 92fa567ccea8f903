import t from 'tap'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { parse } from '@formatjs/icu-messageformat-parser'
import { isStructurallySame } from '@formatjs/icu-messageformat-parser/manipulator.js'
import { cataloguesDir, readCatalogue } from '../../src/i18n/messages.js'
import { LOCALES } from '../../src/i18n/locales.js'
import { projectRoot } from '../../src/paths.js'

// The catalogues (src/i18n/catalogues/<locale>/<namespace>.json), every namespace, every language:
// each message parses; each language has exactly English's keys; each translation has English's
// placeholders with the same types (a plural stays a plural, a date a date); every key is used
// somewhere in the code, and every key the code names is in English.

const english = readCatalogue('en')
const SOURCES = ['src', 'console', 'page-scripts'].map(d => join(projectRoot, d))

function sourceFiles (dir: string): string[] {
  return readdirSync(dir).flatMap(name => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return name === 'generated' || name === 'catalogues' ? [] : sourceFiles(path)
    return /\.(ts|tsx|mjs|js)$/.test(name) ? [path] : []
  })
}
const files = SOURCES.flatMap(sourceFiles).map(path => ({ path, text: readFileSync(path, 'utf8') }))
const quoted = (s: string): string[] => [`'${s}'`, `"${s}"`, `\`${s}\``]

t.test('every message parses, in every language', async t => {
  for (const locale of LOCALES) {
    const broken: string[] = []
    for (const [key, message] of readCatalogue(locale)) {
      try { parse(message) } catch (err) { broken.push(`${key}: ${(err as Error).message}`) }
    }
    t.same(broken, [], `${locale}: every message parses`)
  }
})

t.test('every language has exactly the English keys', async t => {
  const namespaces = readdirSync(join(cataloguesDir, 'en')).filter(f => f.endsWith('.json'))
  t.ok(namespaces.includes('email.json'), 'the e-mails are in the catalogue')
  for (const locale of LOCALES.filter(l => l !== 'en')) {
    const own = readCatalogue(locale)
    t.same([...english.keys()].filter(k => !own.has(k)), [], `${locale}: no key missing`)
    t.same([...own.keys()].filter(k => !english.has(k)), [], `${locale}: no key English lacks`)
  }
})

t.test('every translation has the English placeholders, of the same types', async t => {
  for (const locale of LOCALES.filter(l => l !== 'en')) {
    const wrong: string[] = []
    for (const [key, message] of readCatalogue(locale)) {
      const source = english.get(key)
      if (source === undefined) continue
      const same = isStructurallySame(parse(source), parse(message))
      if (!same.success) wrong.push(`${key}: ${same.error?.message ?? ''}`)
    }
    t.same(wrong, [], `${locale}: the same arguments as English`)
  }
})

t.test('every key is used by the code', async t => {
  // A key appears as written: `<namespace>.<key>` (translate), or `<key>` within its namespace's
  // helper (the e-mails' say(), which adds `email.`).
  // A console screen's own words (`console-<screen>.<key>`) are used only by files that type their
  // words by that catalogue (console/i18n.ts, screenWords): the files that import its English.
  const unused = [...english.keys()].filter(full => {
    const namespace = full.slice(0, full.indexOf('.'))
    const key = full.slice(full.indexOf('.') + 1)
    const readers = namespace.startsWith('console-') ? files.filter(f => f.text.includes(`/en/${namespace}.json'`)) : files
    return !readers.some(f => [...quoted(full), ...quoted(key)].some(q => f.text.includes(q)))
  })
  t.same(unused, [], 'no key that nothing uses')
})

t.test('every key the code names is in English', async t => {
  const namespaces = new Set([...english.keys()].map(k => k.slice(0, k.indexOf('.'))))
  const missing: string[] = []
  for (const f of files) {
    const where = relative(projectRoot, f.path)
    // `<namespace>.<key>` literals passed to a function (translate, t, …), and say(reader, '<key>')
    // for the e-mails.
    for (const m of f.text.matchAll(/[(,]\s*['"`]([a-z]+)\.([A-Za-z0-9.]+)['"`]\s*[,)]/g)) {
      const [, namespace, key] = m as unknown as [string, string, string]
      if (namespaces.has(namespace) && !key.endsWith('json') && !english.has(`${namespace}.${key}`)) {
        missing.push(`${where}: ${namespace}.${key}`)
      }
    }
    for (const m of f.text.matchAll(/\bsay\([^,()]+, '([A-Za-z0-9.]+)'/g)) {
      if (!english.has(`email.${m[1] ?? ''}`)) missing.push(`${where}: email.${m[1] ?? ''}`)
    }
    for (const m of f.text.matchAll(/'(certificate\.step\d)'/g)) {
      if (!english.has(`email.${m[1] ?? ''}`)) missing.push(`${where}: email.${m[1] ?? ''}`)
    }
  }
  t.same(missing, [], 'no message the code asks for is missing')
})

t.test('a console file typed by a screen\'s catalogue reads that screen\'s words', async t => {
  // console/i18n.ts keeps each screen's words apart: screenWordsOf<typeof own>('<screen>') must
  // name the catalogue its type comes from (console-<screen>.json), and routes.ts load it with the
  // screen, or a module when they are needed (words.ts: the refusals', at the first refusal).
  const consoleFiles = files.filter(f => relative(projectRoot, f.path).startsWith('console'))
  const routes = readFileSync(join(projectRoot, 'console', 'routes.ts'), 'utf8') +
    consoleFiles.map(f => [...f.text.matchAll(/loadScreenWords\('([a-z-]+)'\)/g)].map(m => `words: '${m[1] ?? ''}'`).join()).join()
  const wrong: string[] = []
  for (const f of files) {
    const typed = /\/en\/console-([a-z-]+)\.json'/.exec(f.text)?.[1]
    if (typed === undefined) continue
    const where = relative(projectRoot, f.path)
    if (!f.text.includes(`screenWordsOf<typeof own>('${typed}')`)) wrong.push(`${where}: not screenWordsOf<typeof own>('${typed}')`)
    if (!routes.includes(`words: '${typed}'`)) wrong.push(`${where}: routes.ts loads no words '${typed}'`)
  }
  t.same(wrong, [], 'each reads its own catalogue\'s words')
})

t.test('French writes a no-break space before : ; ? ! and inside « »', async t => {
  // A plain space lets a line start with the punctuation; French typography binds it to the word.
  const plain = [...readCatalogue('fr')].filter(([, message]) => / [:;?!»]|« /.test(message)).map(([key]) => key)
  t.same(plain, [], 'no plain space where French wants a no-break one')
})
