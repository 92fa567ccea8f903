import t from 'tap'
import { build } from '../helpers/build.js'
import { assertContract, operations } from '../helpers/contract.js'

// A literal segment in a template's place: for every templated segment of every operation's path,
// each literal that another path of the contract declares after the same prefix (`batch` and
// `funnel` beside `/api/invitations/{invitationId}`) is sent in its place, anonymously. The answer is
// 404 or 405 (no such route), never the parameter's format error (400) nor a 401 for a route that
// is not there. Derived from the contract: a path added later is walked without editing this file.

const SAMPLE_ID = '0190a2b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b'

function cases (): Array<{ method: string, url: string }> {
  const ops = operations()
  const paths = [...new Set(ops.map(o => o.path))]
  const out: Array<{ method: string, url: string }> = []
  for (const { method, path } of ops) {
    const segments = path.split('/')
    segments.forEach((segment, i) => {
      if (!segment.startsWith('{')) return
      const literals = new Set<string>()
      for (const other of paths) {
        const theirs = other.split('/')
        const literal = theirs[i]
        if (literal === undefined || literal.startsWith('{')) continue
        if (segments.slice(0, i).every((s, j) => s === theirs[j] || s.startsWith('{') || theirs[j]?.startsWith('{') === true)) {
          literals.add(literal)
        }
      }
      for (const literal of literals) {
        const url = segments.map((s, j) => j === i ? literal : s.startsWith('{') ? SAMPLE_ID : s).join('/')
        // The literal path itself with this method is a route of its own: not a case.
        if (ops.some(o => o.method === method && o.path === segments.map((s, j) => j === i ? literal : s).join('/'))) continue
        out.push({ method, url })
      }
    })
  }
  return out
}

t.test('a literal of another path in a parameter\'s place answers 404 or 405, for every path', async t => {
  const all = cases()
  t.ok(all.some(c => c.method === 'DELETE' && c.url === '/api/invitations/batch'), 'DELETE /api/invitations/batch is a case')
  const h = await build(t)
  for (const { method, url } of all) {
    const res = await h.inject({ method: method as 'GET', url })
    t.ok([404, 405].includes(res.statusCode), `${method} ${url} → ${res.statusCode}`)
    if (res.statusCode === 404 && method !== 'HEAD') t.equal(res.json().code, 'NOT_FOUND', `${method} ${url}: NOT_FOUND`)
  }
  // And the literal routes themselves still answer as theirs (not swallowed by the guard).
  const batch = await h.inject({ method: 'POST', url: '/api/invitations/batch', payload: {} })
  t.equal(batch.statusCode, 401, 'POST /api/invitations/batch is its own route (401 without a session)')
  assertContract(t, 'POST', '/api/invitations/batch', batch)
})
