import t from 'tap'
import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { build } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { ALL_SCOPES, createApiKey } from '../helpers/mcp.js'
import { uuidV7Source } from '../../src/lib/uuid.js'
import { csvCell } from '../../src/audit/export.js'
import { insertAuditRows, type AuditRow } from '../helpers/audit-rows.js'

// GET /api/audit-events/export (issue 55, item 1): the trail as NDJSON or CSV by Accept, oldest
// first, the list's filters and a time range, more records than one page of the reader (2,000),
// CSV cells a spreadsheet would run as formulas opened as text, and a cut transfer resumed from
// the id of its last complete line. One app (PGlite, or PostgreSQL with TEST_DATABASE_URL).

const URL = '/api/audit-events/export'
const h = await build(t)
const admin = await h.signIn({ role: 'admin', email: 'ada@example.com' })
const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId, email: 'mo@example.com' })
const other = await h.signIn({ role: 'admin', workspaceName: 'Other', email: 'zed@example.com' })

// 4,500 records a second apart from 2026-01-01, and one of another workspace among them.
const N = 4500
const START = Date.parse('2026-01-01T00:00:00.000Z')
const newId = uuidV7Source()
const ids: string[] = []
const rows: AuditRow[] = []
for (let i = 0; i < N; i++) {
  const at = new Date(START + i * 1000)
  const id = newId(at)
  ids.push(id)
  // Every tenth is the admin's own edit of a name that would run as a formula in a spreadsheet.
  const settings = i % 10 === 0
  rows.push({
    id,
    workspaceId: admin.workspaceId,
    action: settings ? 'workspace.settings_changed' : 'invitation.created',
    actorType: i % 2 === 0 ? 'user' : 'system',
    actorId: i % 2 === 0 ? admin.userId : null,
    actorLabel: i % 2 === 0 ? '-ada@example.com' : null,
    targetType: 'invitation',
    targetId: `inv-${i}`,
    payload: settings ? { name: '=HYPERLINK("http://evil.example","click")' } : { email: `p${i}@example.com` },
    createdAt: at,
    source: i % 2 === 0 ? 'web' : 'system'
  })
}
await insertAuditRows(h.db, rows)
await h.db.query(
  `INSERT INTO audit_events (id, workspace_id, action, actor_type, payload, created_at, source)
   VALUES ($1, $2, 'invitation.created', 'system', '{}', $3, 'system')`,
  [newId(new Date(START + 5000)), other.workspaceId, new Date(START + 5000)])

/** The export as the service sends it; its lines without the final newline. */
async function exportOf (query: string, accept?: string, who = admin.cookie) {
  const res = await h.inject({
    method: 'GET', url: `${URL}${query}`, headers: { cookie: who, ...(accept !== undefined ? { accept } : {}) }
  })
  assertContract(t, 'GET', URL, res)
  return { res, lines: res.body.split(/\r?\n/).slice(0, -1) }
}

t.test('NDJSON by default: every record of the workspace, oldest first, as the list shows them', async t => {
  const { res, lines } = await exportOf('', undefined)
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^application\/x-ndjson/)
  t.match(res.headers['content-disposition'], /^attachment; filename="audit-events-\d{4}-\d{2}-\d{2}\.ndjson"$/)
  const records = lines.map(l => JSON.parse(l)).filter(r => ids.includes(r.id))
  t.equal(records.length, N, 'past the reader\'s page of 2,000')
  t.same(records.map(r => r.id), ids, 'oldest first')
  t.same(records[1], {
    id: ids[1],
    action: 'invitation.created',
    actor: { type: 'system', id: null, label: null },
    source: 'system',
    target: { type: 'invitation', id: 'inv-1' },
    payload: { email: 'p1@example.com' },
    createdAt: '2026-01-01T00:00:01.000Z',
    // Written straight into the table, as before the hash chain: outside it.
    workspaceId: admin.workspaceId,
    sequence: null,
    previousHash: null,
    hash: null
  })
  const list = await h.inject({ url: '/api/audit-events?limit=1&until=2026-01-01T00:00:02.000Z', headers: { cookie: admin.cookie } })
  t.same(list.json().items[0], records[1], 'a line is the list\'s item')
  t.notOk(lines.some(l => l.includes(other.workspaceId)), 'never another workspace\'s')
  const star = await exportOf('', '*/*')
  t.equal(star.lines.length, lines.length)
})

t.test('CSV by Accept: a header, quoted cells, formulas neutralised, dates in UTC', async t => {
  const { res, lines } = await exportOf('?until=2026-01-01T00:00:11.000Z', 'text/csv')
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^text\/csv/)
  t.equal(lines[0], 'id,createdAt,action,actorType,actorId,actorLabel,source,targetType,targetId,payload')
  t.equal(lines.length, 1 + 11)
  t.equal(lines[1], [ids[0], '2026-01-01T00:00:00.000Z', 'workspace.settings_changed', 'user', admin.userId,
    '\'-ada@example.com', 'web', 'invitation', 'inv-0'].map(v => `"${v}"`).join(',') +
    ',"{""name"":""=HYPERLINK(\\""http://evil.example\\"",\\""click\\"")""}"',
  'a label that starts with - opens as text; the payload is its JSON, quotes doubled')
  t.equal(csvCell('=1+1'), '"\'=1+1"')
  t.equal(csvCell('+1'), '"\'+1"')
  t.equal(csvCell('@SUM(A1)'), '"\'@SUM(A1)"')
  t.equal(csvCell('\tx'), '"\'\tx"')
  t.equal(csvCell('\rx'), '"\'\rx"')
  t.equal(csvCell('a "b", c\nd'), '"a ""b"", c\nd"')
  t.equal(csvCell(null), '""')
  const ndjsonFirst = (await exportOf('?until=2026-01-01T00:00:11.000Z', 'text/csv;q=0.5, application/x-ndjson')).lines[0]
  t.equal(JSON.parse(ndjsonFirst ?? '{}').id, ids[0], 'the higher quality wins')
  const refused = await h.inject({ url: URL, headers: { cookie: admin.cookie, accept: 'application/xml' } })
  assertContract(t, 'GET', URL, refused)
  t.equal(refused.statusCode, 406)
  t.equal(refused.json().code, 'NOT_ACCEPTABLE')
})

t.test('the list\'s filters and a time range', async t => {
  const range = await exportOf('?since=2026-01-01T00:10:00.000Z&until=2026-01-01T00:20:00.000Z')
  t.equal(range.lines.length, 600, 'since inclusive, until exclusive')
  t.equal(JSON.parse(range.lines[0] ?? '{}').createdAt, '2026-01-01T00:10:00.000Z')
  const action = await exportOf('?action=workspace.settings_changed')
  t.equal(action.lines.length, N / 10)
  const actor = await exportOf('?actor=-ADA@example.com&source=web')
  t.equal(actor.lines.length, N / 2)
  const target = await exportOf('?targetType=invitation&targetId=inv-42')
  t.same(target.lines.map(l => JSON.parse(l).id), [ids[42]])
  const bad = await h.inject({ url: `${URL}?since=yesterday`, headers: { cookie: admin.cookie } })
  assertContract(t, 'GET', URL, bad)
  t.equal(bad.statusCode, 400)
  t.match(bad.json().details.errors, [{ in: 'query', field: 'since' }])
})

t.test('who may export: admins and keys with audit:read', async t => {
  const asMember = await h.inject({ url: URL, headers: { cookie: member.cookie } })
  assertContract(t, 'GET', URL, asMember)
  t.equal(asMember.statusCode, 403)
  const anonymous = await h.inject({ url: URL })
  assertContract(t, 'GET', URL, anonymous)
  t.equal(anonymous.statusCode, 401)
  const key = (await createApiKey(h, admin, 'audit', ['audit:read'])).secret
  const withKey = await h.inject({ url: `${URL}?targetId=inv-7`, headers: { authorization: `Bearer ${key}` } })
  t.equal(withKey.statusCode, 200)
  t.equal(withKey.body.trim().split('\n').length, 1)
  const narrow = (await createApiKey(h, admin, 'no audit', ALL_SCOPES.filter(s => s !== 'audit:read'))).secret
  const refused = await h.inject({ url: URL, headers: { authorization: `Bearer ${narrow}` } })
  t.equal(refused.statusCode, 403)
})

t.test('a cut transfer resumes from the id of its last complete line, CSV without a second header', async t => {
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = h.app.server.address() as AddressInfo
  for (const accept of ['application/x-ndjson', 'text/csv']) {
    // Read ~100 kB over a real socket, then cut the connection.
    const partial = await new Promise<string>((resolve, reject) => {
      const req = httpRequest({ port, path: URL, headers: { cookie: admin.cookie, accept } }, res => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          body += chunk
          if (body.length > 100_000) { req.destroy(); resolve(body) }
        })
        res.on('end', () => { reject(new Error('the export ended before it was cut')) })
      })
      req.on('error', err => { if (!req.destroyed) reject(err) })
      req.end()
    })
    const complete = partial.slice(0, partial.lastIndexOf('\n') + 1)
    const lines = complete.split(/\r?\n/).slice(0, -1)
    const last = accept === 'text/csv' ? (lines.at(-1) ?? '').slice(1, 37) : JSON.parse(lines.at(-1) ?? '{}').id
    t.ok(ids.includes(last), `${accept}: the last complete line names a record`)
    const rest = await exportOf(`?after=${last}`, accept)
    const whole = (await exportOf('', accept)).res.body
    t.equal(complete + rest.res.body, whole, `${accept}: the parts concatenate to the whole export`)
  }
})
