import t from 'tap'
import type tap from 'tap'
import { createHash } from 'node:crypto'
import { build, type SignedIn } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { ALL_SCOPES } from '../helpers/mcp.js'

// API keys: created by admins (secret shown once, stored as a hash), listed without secrets,
// revoked at once; a key acts as its creator while the creator is an active admin.

const KEYS = '/api/api-keys'
const MCP = '/api/mcp'
const KEY_FORMAT = /^wsk_[0-9a-z]{12}_[A-Za-z0-9_-]{43}$/

async function createKey (
  t: Pick<typeof tap, 'equal' | 'same'>,
  admin: SignedIn,
  name = 'assistant'
): Promise<{ id: string, secret: string, prefix: string }> {
  const res = await h.inject({
    method: 'POST',
    url: KEYS,
    headers: { cookie: admin.cookie, 'content-type': 'application/json' },
    payload: { name, scopes: ALL_SCOPES }
  })
  t.equal(res.statusCode, 201, 'key created')
  assertContract(t, 'POST', KEYS, res)
  return res.json()
}

/** A cheap MCP call (tools/list) with a key; returns the response. */
async function useKey (secret: string) {
  return await h.inject({
    method: 'POST',
    url: MCP,
    headers: {
      authorization: `Bearer ${secret}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream'
    },
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' }
  })
}

// One app for the file (each test uses workspaces of its own): building one costs seconds.
const h = await build(t)

t.test('create, list and revoke; the secret is shown once and stored only as a hash', async t => {
  const admin = await h.signIn({ role: 'admin' })
  const created = await createKey(t, admin, 'Claude desktop')
  t.match(created.secret, KEY_FORMAT, 'key format wsk_<12>_<43>')
  t.equal(created.prefix, created.secret.slice(0, 16), 'prefix is the first 16 characters')
  t.match(created, { name: 'Claude desktop', createdBy: admin.userId, lastUsedAt: null })

  const stored = await h.db.query<Record<string, unknown>>('SELECT * FROM api_keys WHERE id = $1', [created.id])
  const row = stored.rows[0] as Record<string, unknown>
  t.equal(row.secret_hash, createHash('sha256').update(created.secret).digest('hex'), 'SHA-256 of the key stored')
  t.notOk(JSON.stringify(row).includes(created.secret.slice(17)), 'the secret part is nowhere in the row')

  const list = await h.inject({ method: 'GET', url: KEYS, headers: { cookie: admin.cookie } })
  t.equal(list.statusCode, 200)
  assertContract(t, 'GET', KEYS, list)
  t.same(list.json().items.map((k: { id: string }) => k.id), [created.id])
  t.notOk(list.body.includes(created.secret.slice(17)), 'list never shows the secret')
  t.notOk('secret' in list.json().items[0])

  t.equal((await useKey(created.secret)).statusCode, 200, 'the key works')

  const del = await h.inject({ method: 'DELETE', url: `${KEYS}/${created.id}`, headers: { cookie: admin.cookie } })
  t.equal(del.statusCode, 204)
  assertContract(t, 'DELETE', `${KEYS}/${created.id}`, del)
  const after = await useKey(created.secret)
  t.equal(after.statusCode, 401, 'a revoked key is refused at once')
  t.same(after.json(), { message: 'Authentication required', code: 'UNAUTHENTICATED' })
  assertContract(t, 'POST', MCP, after)
  t.same(
    (await h.inject({ method: 'GET', url: KEYS, headers: { cookie: admin.cookie } })).json().items, [],
    'revoked keys leave the list'
  )

  const again = await h.inject({ method: 'DELETE', url: `${KEYS}/${created.id}`, headers: { cookie: admin.cookie } })
  t.equal(again.statusCode, 404, 'revoking twice: not found')
  assertContract(t, 'DELETE', `${KEYS}/${created.id}`, again)

  const audit = await h.inject({
    method: 'GET',
    url: `/api/audit-events?targetType=api_key&targetId=${created.id}`,
    headers: { cookie: admin.cookie }
  })
  t.equal(audit.statusCode, 200)
  const events = audit.json().items as Array<{
    action: string,
    actor: {
      type: string,
      id: string
    },
    payload: Record<string, unknown>
  }>
  t.same(events.map(e => e.action), ['api_key.revoked', 'api_key.created'], 'both actions audited')
  t.match(
    events[1],
    { actor: { type: 'user', id: admin.userId }, payload: { name: 'Claude desktop', prefix: created.prefix } }
  )
  t.notOk(audit.body.includes(created.secret.slice(17)), 'no secret in the audit trail')
})

t.test('only admins manage keys; other workspaces see nothing', async t => {
  const admin = await h.signIn({ role: 'admin' })
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  const otherAdmin = await h.signIn({ role: 'admin' })
  const key = await createKey(t, admin)

  for (const [method, url] of [['POST', KEYS], ['GET', KEYS], ['DELETE', `${KEYS}/${key.id}`]] as const) {
    const asMember = await h.inject({
      method,
      url,
      headers: { cookie: member.cookie, 'content-type': 'application/json' },
      ...(method === 'POST' ? { payload: { name: 'x', scopes: ['audit:read'] } } : {})
    })
    t.equal(asMember.statusCode, 403, `${method} ${url} as member`)
    assertContract(t, method, url, asMember)
    const anonymous = await h.inject({ method, url })
    t.equal(anonymous.statusCode, 401, `${method} ${url} without a session`)
    assertContract(t, method, url, anonymous)
  }

  t.same(
    (await h.inject({ method: 'GET', url: KEYS, headers: { cookie: otherAdmin.cookie } })).json(), { items: [] },
    'other workspace lists none'
  )
  const foreign = await h.inject({ method: 'DELETE', url: `${KEYS}/${key.id}`, headers: { cookie: otherAdmin.cookie } })
  t.equal(foreign.statusCode, 404, 'another workspace cannot revoke it')
  t.equal(foreign.json().code, 'NOT_FOUND')
  assertContract(t, 'DELETE', `${KEYS}/${key.id}`, foreign)
  t.equal((await useKey(key.secret)).statusCode, 200, 'and the key still works')

  const bad = await h.inject({
    method: 'POST',
    url: KEYS,
    headers: { cookie: admin.cookie, 'content-type': 'application/json' },
    payload: { name: '' }
  })
  t.equal(bad.statusCode, 400)
  assertContract(t, 'POST', KEYS, bad)
  const badId = await h.inject({ method: 'DELETE', url: `${KEYS}/not-a-uuid`, headers: { cookie: admin.cookie } })
  t.equal(badId.statusCode, 400)
  assertContract(t, 'DELETE', `${KEYS}/not-a-uuid`, badId)
})

t.test('a key acts as its creator only while the creator is an active admin', async t => {
  const creator = await h.signIn({ role: 'admin' })
  const other = await h.signIn({ role: 'admin', workspaceId: creator.workspaceId })
  const key = await createKey(t, creator)
  const setRole = async (role: string) => {
    const res = await h.inject({
      method: 'PATCH',
      url: `/api/users/${creator.userId}`,
      headers: { cookie: other.cookie, 'content-type': 'application/json' },
      payload: { role }
    })
    t.equal(res.statusCode, 200, `role → ${role}`)
  }

  await setRole('member')
  const demoted = await useKey(key.secret)
  t.equal(demoted.statusCode, 401, 'creator demoted: the key stops working')
  assertContract(t, 'POST', MCP, demoted)
  await setRole('admin')
  t.equal((await useKey(key.secret)).statusCode, 200, 'promoted again: it works again (rights are read per request)')

  await h.db.query("UPDATE users SET status = 'suspended', suspended_at = now() WHERE id = $1", [creator.userId])
  t.equal((await useKey(key.secret)).statusCode, 401, 'creator disabled: refused')
  await h.db.query("UPDATE users SET status = 'active', suspended_at = NULL WHERE id = $1", [creator.userId])

  const removed = await h.inject({
    method: 'DELETE',
    url: `/api/users/${creator.userId}`,
    headers: { cookie: other.cookie }
  })
  t.equal(removed.statusCode, 204)
  t.equal((await useKey(key.secret)).statusCode, 401, 'creator removed: refused')
})

t.test('malformed, unknown and tampered keys are refused alike', async t => {
  const admin = await h.signIn({ role: 'admin' })
  const key = await createKey(t, admin)
  const last = key.secret.at(-1) === 'A' ? 'B' : 'A'
  const cases: Array<[string, string | undefined]> = [
    ['no header', undefined],
    ['not bearer', `Basic ${key.secret}`],
    ['garbage', 'Bearer nope'],
    ['tampered secret, right prefix', `Bearer ${key.secret.slice(0, -1)}${last}`],
    ['unknown prefix', `Bearer wsk_000000000000_${key.secret.slice(17)}`],
    ['session cookie is not an API key', undefined]
  ]
  for (const [label, authorization] of cases) {
    const res = await h.inject({
      method: 'POST',
      url: MCP,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(authorization !== undefined ? { authorization } : {}),
        ...(label.startsWith('session') ? { cookie: admin.cookie } : {})
      },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' }
    })
    t.equal(res.statusCode, 401, label)
    t.equal(res.json().code, 'UNAUTHENTICATED', label)
    assertContract(t, 'POST', MCP, res)
  }
})

t.test('last use is recorded at most once a minute', async t => {
  const admin = await h.signIn({ role: 'admin' })
  const key = await createKey(t, admin)
  const lastUsed = async () => (await h.inject({
    method: 'GET',
    url: KEYS,
    headers: { cookie: admin.cookie }
  })).json().items[0].lastUsedAt as string | null

  t.equal(await lastUsed(), null)
  const first = h.clock.now().toISOString()
  await useKey(key.secret)
  t.equal(await lastUsed(), first, 'first use recorded')
  h.clock.advance(30_000)
  await useKey(key.secret)
  t.equal(await lastUsed(), first, 'within the minute: not rewritten')
  h.clock.advance(31_000)
  await useKey(key.secret)
  t.equal(await lastUsed(), h.clock.now().toISOString(), 'a minute later: updated')
})
