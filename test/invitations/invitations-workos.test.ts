import t from 'tap'
import { build } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { startFakeHttp, type FakeRequest } from '../helpers/fake-http.js'
import { startSmtp } from '../helpers/smtp.js'
import { insertWorkspace } from '../../src/db/workspaces.js'
import { invite } from '../helpers/invite.js'
import { workosInvitationFor } from '../helpers/workos.js'

// Path 1: the official WorkOS SDK pointed at a loopback fake of the WorkOS API. Success answers
// the provider's invitation id; "already a member" answers 409; a 5xx, a hang or a workspace
// without an organization fall back to our own e-mail.

const URL_ = '/api/users/invite'
const ORG = 'org_01TESTORGANIZATION'

const workosInvitation = (req: FakeRequest, id: string) => workosInvitationFor(req, id, ORG)

t.test('WorkOS invitations path and its fallbacks', async t => {
  const smtp = await startSmtp(t)
  const fake = await startFakeHttp(t)
  let n = 0
  fake.on(
    'POST /user_management/invitations', req => ({ status: 201, json: workosInvitation(req, `invitation_0${++n}`) })
  )
  const h = await build(t, {
    env: {
      SMTP_URL: smtp.url,
      WORKOS_API_KEY: 'sk_test_fake',
      WORKOS_CLIENT_ID: 'client_fake',
      WORKOS_API_HOSTNAME: fake.hostname,
      WORKOS_API_PORT: String(fake.port),
      WORKOS_API_HTTPS: 'false',
      WORKOS_TIMEOUT_MS: '500'
    }
  })
  const workspace = await insertWorkspace(h.db, { name: 'Acme', workosOrganizationId: ORG, now: h.clock.now() })
  const admin = await h.signIn({ role: 'admin', workspaceId: workspace.id })
  const sent = () => fake.requests.filter(r => r.path.startsWith('/user_management/invitations'))

  await t.test('success: the provider invites; the answer carries its invitation id', async t => {
    const res = await invite(h, admin.cookie, { email: 'Idp.User@example.com', role: 'admin' })
    t.equal(res.statusCode, 200)
    assertContract(t, 'POST', URL_, res)
    t.match(res.json(), { success: true, outcome: 'invited', invitationId: 'invitation_01' })
    t.notOk('invitationUrl' in res.json(), 'no signup link on the provider path')
    const req = sent()[0]
    t.equal(req?.headers.authorization, 'Bearer sk_test_fake', 'the SDK authenticates with the API key')
    t.match(req?.json, { email: 'idp.user@example.com', organization_id: ORG, role_slug: 'admin', expires_in_days: 7 })
    t.equal(smtp.messages.length, 0, 'we send no e-mail of our own')
    const list = await h.inject({ method: 'GET', url: '/api/invitations', headers: { cookie: admin.cookie } })
    t.match(
      list.json().items[0],
      {
        email: 'idp.user@example.com',
        deliveryStatus: 'identity_provider',
        identityProviderInvitationId: 'invitation_01',
        status: 'pending'
      }
    )
  })

  await t.test('re-invite and resend re-send the same provider invitation', async t => {
    fake.on(
      'POST /user_management/invitations/invitation_01/resend',
      req => ({ json: workosInvitation(req, 'invitation_01') })
    )
    const res = await invite(h, admin.cookie, { email: 'idp.user@example.com', role: 'admin' })
    t.equal(res.statusCode, 200)
    t.equal(res.json().invitationId, 'invitation_01')
    t.equal(sent().at(-1)?.path, '/user_management/invitations/invitation_01/resend')
  })

  await t.test('revoke tells the provider too', async t => {
    fake.on(
      'POST /user_management/invitations/invitation_01/revoke',
      req => ({ json: { ...workosInvitation(req, 'invitation_01'), state: 'revoked' } })
    )
    const list = await h.inject({ method: 'GET', url: '/api/invitations', headers: { cookie: admin.cookie } })
    const id = list.json().items[0].id as string
    const res = await h.inject({ method: 'DELETE', url: `/api/invitations/${id}`, headers: { cookie: admin.cookie } })
    t.equal(res.statusCode, 200)
    assertContract(t, 'DELETE', `/api/invitations/${id}`, res)
    t.equal(sent().at(-1)?.path, '/user_management/invitations/invitation_01/revoke')
  })

  await t.test('the provider says the user is already a member: 409 USER_EXISTS', async t => {
    const replies = [
      {
        status: 400,
        json: { code: 'user_already_organization_member', message: 'The user is already a member of the organization.' }
      },
      {
        status: 422,
        json: { code: 'user_already_organization_member', message: 'User is already a member of this organization.' }
      },
      { status: 409, json: { error: 'user_already_exists', message: 'A user with this email already exists.' } }
    ]
    for (const [i, reply] of replies.entries()) {
      fake.on('POST /user_management/invitations', () => reply)
      const email = `member${i}@example.com`
      const res = await invite(h, admin.cookie, { email })
      t.equal(res.statusCode, 409, `provider ${reply.status}`)
      t.equal(res.json().code, 'USER_EXISTS')
      assertContract(t, 'POST', URL_, res)
      const rows = await h.db.query<{ status: string }>('SELECT status FROM invitations WHERE email = $1', [email])
      t.same(rows.rows.map(r => r.status), ['revoked'], 'our invitation is closed, not left pending')
    }
    t.equal(smtp.messages.length, 0, 'no fallback e-mail for an existing user')
  })

  await t.test('provider 5xx → our own e-mail (fallback)', async t => {
    fake.on('POST /user_management/invitations', () => ({ status: 503, json: { message: 'unavailable' } }))
    const res = await invite(h, admin.cookie, { email: 'down@example.com' })
    t.equal(res.statusCode, 200)
    assertContract(t, 'POST', URL_, res)
    t.match(res.json(), { success: true, invitationUrl: /\/signup\?token=/ })
    t.notOk('invitationId' in res.json())
    const mail = await smtp.nextMessage(0)
    t.ok(mail.text.includes(res.json().invitationUrl))
  })

  await t.test('provider hangs → fallback within WORKOS_TIMEOUT_MS', async t => {
    fake.on('POST /user_management/invitations', () => ({ hang: true }))
    const seen = smtp.messages.length
    const started = performance.now()
    const res = await invite(h, admin.cookie, { email: 'hang@example.com' })
    const elapsed = performance.now() - started
    t.equal(res.statusCode, 200)
    t.match(res.json(), { invitationUrl: /\/signup\?token=/ })
    t.ok(elapsed < 3000, `answered in ${Math.round(elapsed)} ms (WORKOS_TIMEOUT_MS=500)`)
    t.ok((await smtp.nextMessage(seen)).text.includes(res.json().invitationUrl))
  })

  await t.test('a workspace without an organization uses the fallback path', async t => {
    const other = await h.signIn({ role: 'admin' })
    const before = sent().length
    const res = await invite(h, other.cookie, { email: 'no-org@example.com' })
    t.equal(res.statusCode, 200)
    t.match(res.json(), { invitationUrl: /\/signup\?token=/ })
    t.equal(sent().length, before, 'the provider is not asked')
  })
})
