import t, { type Test } from 'tap'
import { build, type TestApp } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { hashToken } from '../../src/lib/tokens.js'

// First run: while no workspace exists the service issues one-time setup links; POST /api/setup
// (the /setup page's operation) makes the first workspace and its admin and signs them in, once.
// Each test builds its own app: each needs an installation without any workspace.

const tokenOf = (link: string): string => new URL(link).searchParams.get('token') ?? ''

const setup = async (t: Test, h: TestApp, body: Record<string, unknown>) => {
  const res = await h.inject({
    method: 'POST', url: '/api/setup', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body)
  })
  assertContract(t, 'POST', '/api/setup', res)
  return res
}

const countRows = async (h: TestApp, table: 'workspaces' | 'setup_tokens'): Promise<number> =>
  Number((await h.db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${table}`)).rows[0]?.n)

t.test('the setup link makes the first workspace and its admin, signed in; then it is refused', async t => {
  const h = await build(t, { env: { AUTH_RATE_LIMIT_PER_MINUTE: '1000' } })
  const link = await h.app.services.setup.issueLink()
  t.match(link, new RegExp(`^${h.config.publicUrl}/setup\\?token=[A-Za-z0-9_-]{43}$`), 'PUBLIC_URL/setup, 256-bit token')
  const token = tokenOf(link ?? '')

  const page = await h.inject({ method: 'GET', url: `/setup?token=${token}` })
  t.equal(page.statusCode, 200)
  t.match(page.body, '<p id="status" class="muted" hidden>', 'while empty, the page offers the form')

  const wrong = await setup(t, h, { token: `${token.slice(0, -2)}xx`, workspaceName: 'Acme', email: 'ada@example.com' })
  t.equal(wrong.statusCode, 400)
  t.equal(wrong.json().code, 'TOKEN_INVALID')
  const blank = await setup(t, h, { token, workspaceName: '   ', email: 'ada@example.com' })
  t.equal(blank.statusCode, 400)
  t.same(blank.json().details.errors, [{ in: 'body', field: 'workspaceName', message: 'must have 1 to 200 characters besides spaces' }])
  t.equal(await countRows(h, 'setup_tokens'), 1, 'refused attempts keep the token')

  const done = await setup(t, h, { token, workspaceName: '  Acme Robotics ', email: 'Ada@Example.com', name: 'Ada' })
  t.equal(done.statusCode, 201, done.body)
  t.match(done.headers['set-cookie'], /^service_session=[^;]+; .*HttpOnly/)
  t.match(done.json(), { user: { email: 'ada@example.com', name: 'Ada', role: 'admin' }, workspace: { name: 'Acme Robotics' } })
  const cookie = String(done.headers['set-cookie']).split(';')[0] ?? ''
  const me = await h.inject({ method: 'GET', url: '/api/users/me', headers: { cookie } })
  t.equal(me.statusCode, 200)
  t.match(me.json(), { user: { email: 'ada@example.com', role: 'admin' }, workspace: { name: 'Acme Robotics' } })

  // Audited as create-admin's path is, with `setup` as the system actor that made the invitation;
  // the admin joining is an event like any member's.
  const audit = await h.inject({ method: 'GET', url: '/api/audit-events', headers: { cookie } })
  t.equal(audit.statusCode, 200)
  const events = audit.json().items.map((e: { action: string, actor: { type: string, label: string } }) =>
    `${e.action} by ${e.actor.type}:${e.actor.label}`).sort()
  t.same(events, [
    'invitation.accepted by user:ada@example.com',
    'invitation.created by system:setup',
    'member.joined by user:ada@example.com',
    'session.login by user:ada@example.com'
  ])

  for (const again of [token, `${token.slice(0, -2)}xx`]) {
    const res = await setup(t, h, { token: again, workspaceName: 'Second', email: 'eve@example.com' })
    t.equal(res.statusCode, 410, 'once a workspace exists, any token is refused')
    t.equal(res.json().code, 'SETUP_COMPLETE')
  }
  t.equal(await countRows(h, 'workspaces'), 1)
  t.equal(await countRows(h, 'setup_tokens'), 0, 'no token is left behind')
  t.equal(await h.app.services.setup.issueLink(), null, 'a later start issues no link')
  const after = await h.inject({ method: 'GET', url: '/setup' })
  t.match(after.body, '<p id="status" class="muted">This service is set up already', 'the page says so')
})

t.test('a restart while still empty adds a link; every link works until one is used; only hashes are kept', async t => {
  const h = await build(t)
  const first = tokenOf(await h.app.services.setup.issueLink() ?? '')
  const second = tokenOf(await h.app.services.setup.issueLink() ?? '')
  t.not(first, second)
  const stored = (await h.db.query<{ row: string }>('SELECT row_to_json(s)::text AS row FROM setup_tokens s')).rows
    .map(r => r.row).join('\n')
  for (const token of [first, second]) {
    t.notMatch(stored, token, 'the token itself is not stored')
    t.match(stored, hashToken(token), 'its SHA-256 is')
  }
  const done = await setup(t, h, { token: second, workspaceName: 'Acme', email: 'ada@example.com' })
  t.equal(done.statusCode, 201)
  const other = await setup(t, h, { token: first, workspaceName: 'Acme', email: 'bob@example.com' })
  t.equal(other.statusCode, 410, 'the earlier link died with the setup')
})

t.test('two setups at once, each with its own link: exactly one workspace', async t => {
  const h = await build(t)
  const tokens = await Promise.all([1, 2, 3].map(async () => tokenOf(await h.app.services.setup.issueLink() ?? '')))
  const answers = await Promise.all(tokens.map(async (token, i) =>
    await setup(t, h, { token, workspaceName: `Race ${i}`, email: `admin${i}@example.com` })))
  t.same(answers.map(a => a.statusCode).sort(), [201, 410, 410])
  t.equal(await countRows(h, 'workspaces'), 1)
  const users = await h.db.query('SELECT 1 FROM users')
  t.equal(users.rows.length, 1, 'one admin')
})

t.test('a workspace made another way (create-admin) ends the setup links', async t => {
  const h = await build(t)
  const token = tokenOf(await h.app.services.setup.issueLink() ?? '')
  await h.signIn({ role: 'admin', workspaceName: 'Scripted' })
  const res = await setup(t, h, { token, workspaceName: 'Acme', email: 'ada@example.com' })
  t.equal(res.statusCode, 410)
  t.equal(await countRows(h, 'setup_tokens'), 1, 'the refused attempt rolled back')
  t.equal(await h.app.services.setup.issueLink(), null)
  t.equal(await countRows(h, 'setup_tokens'), 0, 'the next start deletes what was left')
})
