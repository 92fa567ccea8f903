import t from 'tap'
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { projectRoot } from '../../src/paths.js'
import { loadContract } from '../../src/app.js'

// Dredd (the API testing tool) compiles openapi.yaml into HTTP transactions; it refuses to build
// one for a URL whose path parameters have no example. Its compiler (dredd-transactions, the
// library Dredd itself uses) must report no error for the contract. Its warnings are about the
// OpenAPI 3.1 keywords its 3.0 parser does not know and are listed, not failed.

interface Annotation { type: 'error' | 'warning', component: string, message: string }
interface Compiled {
  transactions: Array<{
    name: string,
    request: {
      method: string,
      uri: string
    }
  }>,
  annotations: Annotation[]
}
interface DreddTransactions {
  parse: (source: string, cb: (err: Error | null, r: { mediaType: string, apiElements: unknown }) => void) => void
  compile: (mediaType: string, apiElements: unknown, filename: string) => Compiled
}

const { parse, compile } = createRequire(import.meta.url)('dredd-transactions') as DreddTransactions

t.test('Dredd compiles every operation of the contract without an error', async t => {
  const source = readFileSync(join(projectRoot, 'openapi.yaml'), 'utf8')
  const compiled = await new Promise<Compiled>((resolve, reject) => {
    parse(
      source,
      (err, r) => { if (err !== null) reject(err); else resolve(compile(r.mediaType, r.apiElements, 'openapi.yaml')) }
    )
  })
  const errors = compiled.annotations.filter(a => a.type === 'error').map(a => `${a.component}: ${a.message}`)
  t.same(errors, [], 'no error annotations')
  // One or more transactions per operation, each with a concrete URL (path parameters filled in).
  const operations = new Set(compiled.transactions.map(tr => `${tr.request.method} ${tr.name.split(' > ')[1] ?? ''}`))
  const declared = Object.values(
    loadContract().paths as Record<string, object>
  ).flatMap(item => Object.keys(item).filter(k => k !== 'parameters'))
  t.equal(
    operations.size, declared.length, `transactions for every operation (${compiled.transactions.length} transactions)`
  )
  t.same(
    compiled.transactions.filter(tr => tr.request.uri.includes('{')).map(tr => tr.request.uri), [],
    'every URL is concrete'
  )
  const warnings = compiled.annotations.filter(a => a.type === 'warning')
  t.comment(`${warnings.length} warnings, e.g. ${warnings.slice(0, 3).map(w => w.message.split('\n')[0]).join(' | ')}`)
})
