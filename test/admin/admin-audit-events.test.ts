import t from 'tap'
import { build, type SignedIn } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { insertAuditEvent } from '../../src/db/audit-events.js'
import { uuidV7Source } from '../../src/lib/uuid.js'

// GET /api/audit-events: what the member operations record, newest first, cursor pages,
// filters, workspace isolation and refusal of bad input.

// One app for the file (a build costs seconds); every test works in workspaces of its own.
const h = await build(t)

interface Event {
  id: string,
  action: string,
  actor: {
    type: string,
    id: string | null,
    label: string | null
  },
  target: { type: string, id: string } | null,
  payload: Record<string, unknown>,
  createdAt: string,
  hash: string | null
}
interface Page { items: Event[], nextCursor: string | null }
type Tap = Parameters<typeof assertContract>[0]

async function audit (t: Tap, who: SignedIn, query = ''): Promise<{ status: number, page: Page, body: string }> {
  const url = `/api/audit-events${query}`
  const res = await h.inject({ method: 'GET', url, headers: { cookie: who.cookie } })
  assertContract(t, 'GET', url, res)
  return { status: res.statusCode, page: res.json(), body: res.body }
}

async function patchRole (t: Tap, who: SignedIn, userId: string, role: string): Promise<number> {
  const url = `/api/users/${userId}`
  const res = await h.inject({ method: 'PATCH', url, headers: { cookie: who.cookie }, payload: { role } })
  assertContract(t, 'PATCH', url, res)
  return res.statusCode
}

/** Every page of a listing, following nextCursor. */
async function allPages (t: Tap, who: SignedIn, query: string, limit: number): Promise<Page[]> {
  const pages: Page[] = []
  let cursor: string | null = null
  do {
    const sep = query === '' ? '?' : '&'
    const { status, page } = await audit(
      t, who, `${query}${sep}limit=${limit}${cursor !== null ? `&cursor=${cursor}` : ''}`
    )
    if (status !== 200) throw new Error(`page answered ${status}`)
    pages.push(page)
    cursor = page.nextCursor
  } while (cursor !== null && pages.length < 50)
  return pages
}

t.test('member operations are recorded in order, with actor, target and payload', async t => {
  const admin = await h.signIn({ role: 'admin' })
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  const day = 24 * 3600 * 1000
  h.clock.advance(day)
  const promotedAt = h.clock.now().toISOString()
  t.equal(await patchRole(t, admin, member.userId, 'admin'), 200)
  h.clock.advance(1000)
  t.equal(await patchRole(t, admin, member.userId, 'member'), 200)
  h.clock.advance(1000)
  const removedAt = h.clock.now().toISOString()
  const del = await h.inject({
    method: 'DELETE',
    url: `/api/users/${member.userId}`,
    headers: { cookie: admin.cookie }
  })
  t.equal(del.statusCode, 204)

  const { status, page, body } = await audit(t, admin)
  t.equal(status, 200)
  t.equal(page.nextCursor, null)
  const actor = { type: 'user', id: admin.userId, label: admin.email }
  const target = { type: 'user', id: member.userId }
  t.match(page.items, [
    {
      action: 'member.removed',
      actor,
      target,
      payload: { email: member.email, role: 'member', revokedSessions: 1, revokedApiKeys: 0 },
      createdAt: removedAt
    },
    { action: 'member.role_changed', actor, target, payload: { from: 'admin', to: 'member' } },
    { action: 'member.role_changed', actor, target, payload: { from: 'member', to: 'admin' }, createdAt: promotedAt }
  ])
  t.equal(page.items.length, 3, 'one event per action, nothing else')
  // UUIDv7: the text of the ids sorts as their time does.
  const ids = page.items.map(e => e.id)
  t.ok(ids[0]! > ids[1]! && ids[1]! > ids[2]!, 'newest first')
  t.same(page.items[1]?.payload, { from: 'admin', to: 'member', email: member.email },
    'role change payload is exactly {from, to, email}: the member it concerns')
  // No session token (the JWT in either cookie) appears anywhere in the trail.
  for (const who of [admin, member]) {
    t.notOk(
      body.includes(who.cookie.split('=')[1] as string), 'no cookie value in the trail'
    )
  }
})

t.test('pages follow the cursor without gaps or repeats; filters narrow the list', async t => {
  const admin = await h.signIn({ role: 'admin' })
  const a = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  const b = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  // 4 changes of a, 3 of b, interleaved: 7 events.
  for (const [who, role] of [
    [a, 'admin'], [b, 'admin'], [a, 'member'], [b, 'member'], [a, 'admin'], [b, 'admin'], [a, 'member']
  ] as const) {
    t.equal(await patchRole(t, admin, who.userId, role), 200)
  }
  const everything = (await audit(t, admin)).page.items
  t.equal(everything.length, 7)

  const pages = await allPages(t, admin, '', 3)
  t.same(pages.map(p => p.items.length), [3, 3, 1])
  t.same(pages.flatMap(p => p.items), everything, 'the pages together are the whole list, in order')
  t.equal(pages.at(-1)?.nextCursor, null, 'the last page has no cursor')
  t.match(pages[0]?.nextCursor, /^[A-Za-z0-9_-]+$/, 'the cursor is base64url')
  const exact = await allPages(t, admin, '', 7)
  t.same(exact.map(p => p.items.length), [7], 'a page exactly as long as the list has no next cursor')

  const ofA = await allPages(t, admin, `?targetType=user&targetId=${a.userId}`, 2)
  t.same(ofA.map(p => p.items.length), [2, 2])
  t.same(ofA.flatMap(p => p.items).map(e => e.payload.to), ['member', 'admin', 'member', 'admin'])
  t.ok(ofA.flatMap(p => p.items).every(e => e.target?.id === a.userId))
  const byId = await audit(t, admin, `?targetId=${b.userId}`)
  t.equal(byId.page.items.length, 3, 'targetId alone filters too')

  const del = await h.inject({ method: 'DELETE', url: `/api/users/${b.userId}`, headers: { cookie: admin.cookie } })
  t.equal(del.statusCode, 204)
  const removed = await audit(t, admin, '?action=member.removed')
  t.same(removed.page.items.map(e => [e.action, e.target?.id]), [['member.removed', b.userId]])
  const changes = await audit(t, admin, `?action=member.role_changed&targetType=user&targetId=${b.userId}`)
  t.equal(changes.page.items.length, 3, 'action and target combine')
  const none = await audit(t, admin, '?action=api_key.created')
  t.same(none.page, { items: [], nextCursor: null })
  const otherType = await audit(t, admin, `?targetType=invitation&targetId=${a.userId}`)
  t.same(otherType.page.items, [], 'the target type is part of the filter')
})

t.test('default page size is 50', async t => {
  const newId = uuidV7Source()
  const admin = await h.signIn({ role: 'admin' })
  // Written as the feature modules write them; only the listing is under test here.
  for (let i = 0; i < 55; i++) {
    await insertAuditEvent(
      h.db,
      newId(h.clock.now()),
      {
        workspaceId: admin.workspaceId,
        action: 'session.login',
        actor: { type: 'user', id: admin.userId, label: null, source: 'api', requestId: null },
        target: null,
        payload: { n: i },
        now: h.clock.now()
      },
      null
    )
  }
  const first = await audit(t, admin)
  t.equal(first.page.items.length, 50)
  t.same(
    first.page.items[0],
    {
      id: first.page.items[0]?.id,
      action: 'session.login',
      actor: { type: 'user', id: admin.userId, label: null },
      source: 'api',
      target: null,
      payload: { n: 54 },
      createdAt: h.clock.now().toISOString(),
      // Its place in the workspace's hash chain (test/audit/chain.test.ts checks the chain itself).
      workspaceId: admin.workspaceId,
      sequence: 55,
      previousHash: first.page.items[1]?.hash,
      hash: first.page.items[0]?.hash
    }
  )
  t.not(first.page.nextCursor, null)
  const second = await audit(t, admin, `?cursor=${first.page.nextCursor}`)
  t.same(second.page.items.map(e => e.payload.n), [4, 3, 2, 1, 0])
  t.equal(second.page.nextCursor, null)
})

t.test('each workspace sees its own trail only', async t => {
  const admin = await h.signIn({ role: 'admin' })
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  const elsewhere = await h.signIn({ role: 'admin', workspaceName: 'Elsewhere' })
  t.equal(await patchRole(t, admin, member.userId, 'admin'), 200)
  const own = await audit(t, admin)
  t.equal(own.page.items.length, 1)
  const foreign = await audit(t, elsewhere)
  t.same(foreign.page, { items: [], nextCursor: null })
  const byTarget = await audit(t, elsewhere, `?targetType=user&targetId=${member.userId}`)
  t.same(byTarget.page.items, [], 'not even by naming the target')
  // A cursor is only a position; it cannot open another workspace's events.
  const cursor = Buffer.from(
    `${h.clock.now().toISOString()}|ffffffff-ffff-7fff-bfff-ffffffffffff`
  ).toString('base64url')
  t.same((await audit(t, elsewhere, `?cursor=${cursor}`)).page.items, [])
})

t.test('refuses bad input, members and anonymous callers', async t => {
  const admin = await h.signIn({ role: 'admin' })
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  const bad = [
    '?cursor=not*base64',
    `?cursor=${Buffer.from('abc').toString('base64url')}`,
    `?cursor=${Buffer.from('0').toString('base64url')}`,
    `?cursor=${Buffer.from('-5').toString('base64url')}`,
    `?cursor=${Buffer.from('99999999999999999999').toString('base64url')}`,
    '?limit=0', '?limit=101', '?limit=ten',
    '?action=member.promoted', '?targetType=team', '?targetId='
  ]
  for (const q of bad) {
    const r = await audit(t, admin, q)
    t.equal(r.status, 400, q)
    t.equal((r.page as unknown as { code: string }).code, 'VALIDATION_FAILED', q)
  }
  const cursorErr = JSON.parse((await audit(t, admin, '?cursor=abc')).body)
  t.same(
    cursorErr.details,
    { errors: [{ in: 'query', field: 'cursor', message: 'is not a cursor from a previous page of this list' }] }
  )

  t.equal((await audit(t, member)).status, 403)
  const anon = await h.inject({ method: 'GET', url: '/api/audit-events' })
  t.equal(anon.statusCode, 401)
  assertContract(t, 'GET', '/api/audit-events', anon)
})
