import t, { type Test } from 'tap'
import { build, principalOf, type TestApp } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { loadContract } from '../../src/app.js'
import { signClosedHours } from '../../src/audit/digests.js'

// One cursor for every list operation (src/lib/pagination.ts): every operation with a `cursor`
// parameter in openapi.yaml refuses what it did not issue with the same 400, absurd positions
// included (PostgreSQL refused a date at year −200000 with a 500), and pages through its list.
// The operations come from the contract: a new list is checked here without editing this file
// (a list under a new kind of resource needs that resource's id in PATH_VALUES, and something in
// it in the seeding of the second test, which say so when they are missing).

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64url')
const UUID = '3f0c1d52-7d0e-4d8b-9a57-2b0b0e4a0c11'

const contract = loadContract() as {
  paths: Record<string, Record<string, { parameters?: Array<{ $ref?: string, name?: string }> }>>
}
const lists = Object.entries(contract.paths)
  .filter(([, item]) => (item.get?.parameters ?? []).some(p => p.$ref === '#/components/parameters/Cursor'))
  .map(([path]) => path)

/** The values of the path parameters of the lists (a list under a resource needs one of its ids). */
type PathValues = Record<string, string>
function urlOf (t: Test, path: string, values: PathValues): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = values[name]
    if (value === undefined) t.fail(`${path}: no value for the path parameter ${name}; add it to the test's PathValues`)
    return value ?? name
  })
}

/** A batch of three invitations (its rows are one of the lists). */
async function invitationBatch (t: Test, h: TestApp, cookie: string): Promise<string> {
  const res = await h.inject({
    method: 'POST',
    url: '/api/invitations/batch',
    headers: { cookie },
    payload: { rows: [{ email: 'row-0@example.com' }, { email: 'row-1@example.com' }, { email: 'row-2@example.com' }] }
  })
  t.equal(res.statusCode, 201)
  return (res.json() as { id: string }).id
}

/** An endpoint of the admin's workspace (its deliveries are one of the lists). */
async function webhookEndpoint (t: Test, h: TestApp, cookie: string): Promise<string> {
  const res = await h.inject({
    method: 'POST',
    url: '/api/webhook-endpoints',
    headers: { cookie },
    payload: { url: 'http://127.0.0.1:9/hook', eventTypes: ['invitation.created'] }
  })
  t.equal(res.statusCode, 201)
  return (res.json() as { id: string }).id
}

t.test('every list operation refuses a foreign or absurd cursor with one 400', async t => {
  t.ok(lists.length >= 5, `the list operations, from the contract: ${lists.join(', ')}`)
  const h = await build(t)
  const admin = await h.signIn({ role: 'admin' })
  const values: PathValues = {
    endpointId: await webhookEndpoint(t, h, admin.cookie), batchId: await invitationBatch(t, h, admin.cookie)
  }
  const absurd = [
    b64(`-200000-01-01T00:00:00.000Z|${UUID}`),
    b64(`+275760-09-13T00:00:00.000Z|${UUID}`),
    b64(`2026-02-31T00:00:00.000Z|${UUID}`),
    b64('2026-01-01T00:00:00.000Z|1'.replace('|1', '|99999999999999999999')),
    b64(JSON.stringify({ t: '-200000-01-01T00:00:00.000Z', i: UUID })), // the old invitations format
    b64(`2026-01-01T00:00:00.000Z|${UUID}|x`),
    b64('2026-01-01T00:00:00.000Z\u0000|1'),
    'bm90IGEgY3Vyc29y', // "not a cursor"
    'a.b',
    '%00'
  ]
  for (const path of lists) {
    for (const cursor of absurd) {
      const url = `${urlOf(t, path, values)}?cursor=${encodeURIComponent(cursor)}`
      const res = await h.inject({ method: 'GET', url, headers: { cookie: admin.cookie } })
      t.equal(res.statusCode, 400, `${path} cursor ${cursor}`)
      assertContract(t, 'GET', url, res)
      t.match(res.json(), { code: 'VALIDATION_FAILED', details: { errors: [{ in: 'query', field: 'cursor' }] } })
    }
  }
  // The audit trail and the events feed were keyed by one bigserial; a numeric position is refused.
  for (const path of ['/api/audit-events?cursor=', '/api/events?after=']) {
    const url = path + b64('2026-01-01T00:00:00.000Z|42')
    const res = await h.inject({ method: 'GET', url, headers: { cookie: admin.cookie } })
    t.equal(res.statusCode, 400, `${url}: a numeric position (the old bigserial ids)`)
  }
})

t.test('every list operation pages through its items with the one cursor format', async t => {
  const h = await build(t)
  const admin = await h.signIn({ role: 'admin' })
  // Something in every list: an endpoint whose deliveries the invites make, three requests, three invite links,
  // a batch of three rows.
  const values: PathValues = {
    endpointId: await webhookEndpoint(t, h, admin.cookie), batchId: await invitationBatch(t, h, admin.cookie)
  }
  const settings = await h.inject({
    method: 'PATCH',
    url: '/api/workspace/settings',
    headers: { cookie: admin.cookie },
    payload: { invitePolicy: 'request' }
  })
  t.equal(settings.statusCode, 200)
  // Three members; the first asks three times, so its own list (GET /api/invite-requests/mine) has three too.
  const asker = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  for (let i = 0; i < 2; i++) await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  for (let i = 0; i < 3; i++) {
    await h.app.services.inviteRequests.request(
      principalOf(asker, 'member'), { email: `asked-${i}@example.com`, role: 'member' }
    )
    const r = await h.inject({
      method: 'POST',
      url: '/api/users/invite',
      headers: { cookie: admin.cookie },
      payload: { email: `page-${i}@example.com`, role: 'member' }
    })
    t.equal(r.statusCode, 200)
    await h.app.services.inviteLinks.create(principalOf(admin, 'admin'), {})
    h.clock.advance(1000)
    // An hour of the audit chain signed: one digest per hour.
    h.clock.advance(3_600_000)
    await signClosedHours({ db: h.db, config: h.config, clock: h.clock, log: h.app.log })
  }
  for (const path of lists.map(p => urlOf(t, p, values))) {
    const seen: string[] = []
    let url: string | null = `${path}?limit=1`
    while (url !== null) {
      const cookie = path.endsWith('/mine') ? asker.cookie : admin.cookie
      const res = await h.inject({ method: 'GET', url, headers: { cookie } })
      t.equal(res.statusCode, 200, url)
      type Item = { id?: string, index?: number, hour?: string }
      const body = res.json() as { items: Item[], nextCursor: string | null }
      // A batch's rows have no id of their own: their index in the batch; a digest: its hour.
      seen.push(...body.items.map(i => i.id ?? i.hour ?? String(i.index)))
      if (body.nextCursor !== null) {
        t.match(
          Buffer.from(body.nextCursor, 'base64url').toString('utf8'),
          /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\|[0-9a-f-]+$/, `${path}: one format`
        )
      }
      url = body.nextCursor === null ? null : `${path}?limit=1&cursor=${body.nextCursor}`
    }
    t.ok(seen.length >= 3, `${path}: ${seen.length} items over ${seen.length} pages (at least 3: seed this list above)`)
    t.equal(new Set(seen).size, seen.length, `${path}: no item twice`)
  }
})
