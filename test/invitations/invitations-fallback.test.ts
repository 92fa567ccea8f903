import t from 'tap'
import { build, type TestApp } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { startSmtp } from '../helpers/smtp.js'
import { hashToken } from '../../src/lib/tokens.js'
import { invite } from '../helpers/invite.js'

// POST /api/users/invite on the fallback path (no identity provider): our own e-mail through a
// real SMTP peer on loopback, the invitation lifecycle, and the send faults with their retry.

const URL_ = '/api/users/invite'
const DAY = 86_400_000

function tokenOf (url: string): string {
  return new URL(url).searchParams.get('token') ?? ''
}

async function invitationRows (h: TestApp, email: string) {
  const r = await h.db.query<{
    id: string,
    status: string,
    token_hash: string | null,
    delivery_status: string,
    delivery_error: string | null,
    delivery_attempts: number,
    expires_at: Date
  }>(
    'SELECT id, status, token_hash, delivery_status, delivery_error, delivery_attempts, expires_at FROM invitations WHERE email = $1 ORDER BY created_at', [email])
  return r.rows
}

async function auditActions (h: TestApp, targetId: string): Promise<string[]> {
  const r = await h.db.query<{ action: string }>(
    'SELECT action FROM audit_events WHERE target_id = $1 ORDER BY id', [targetId]
  )
  return r.rows.map(x => x.action)
}

t.test('invite → e-mail with the link (from APP_URL, not Host) → the invitee signs up with it', async t => {
  const smtp = await startSmtp(t)
  const h = await build(t, { env: { SMTP_URL: smtp.url, APP_URL: 'https://app.example.test', TRUST_PROXY: 'true' } })
  const admin = await h.signIn({ role: 'admin', workspaceName: 'Acme <Rockets>' })

  // Behind a trusted proxy, with a forged Host and X-Forwarded-Host: the link still uses APP_URL.
  const forged = { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http' }
  const res = await invite(h, admin.cookie, { email: 'New.Person@Example.com', role: 'member' }, forged)
  t.equal(res.statusCode, 200)
  assertContract(t, 'POST', URL_, res)
  const body = res.json()
  t.equal(body.success, true)
  t.notOk('invitationId' in body, 'no identity-provider id on the fallback path')
  t.match(body.invitationUrl, /^https:\/\/app\.example\.test\/signup\?token=[A-Za-z0-9_-]{43}$/)

  const mail = await smtp.nextMessage(0)
  t.same(mail.to, ['new.person@example.com'], 'sent to the lower-cased address')
  t.ok(mail.text.includes(body.invitationUrl), 'text part carries the link')
  t.ok(mail.html.includes(body.invitationUrl), 'HTML part carries the link')
  t.match(mail.text, /Acme <Rockets>/, 'names the workspace')
  t.match(mail.html, /Acme &lt;Rockets&gt;/, 'workspace name escaped in HTML')
  t.ok(mail.text.includes(admin.email), 'names the inviter')
  t.notMatch(mail.text + mail.html + res.body, /evil\.example/, 'Host / X-Forwarded-Host never reach the link')

  const [row] = await invitationRows(h, 'new.person@example.com')
  t.equal(row?.token_hash, hashToken(tokenOf(body.invitationUrl)), 'only the hash of the token is stored')
  t.equal(row?.delivery_status, 'sent')
  t.equal(row?.expires_at.getTime(), h.clock.now().getTime() + 7 * DAY, 'expires after INVITATION_TTL_DAYS')
  t.same(await auditActions(h, row?.id ?? ''), ['invitation.created'])

  const preview = await h.inject({
    method: 'POST',
    url: '/api/auth/invitation',
    payload: { token: tokenOf(body.invitationUrl) }
  })
  t.equal(preview.statusCode, 200)
  t.match(preview.json(), { email: 'new.person@example.com', role: 'member', workspace: { name: 'Acme <Rockets>' } })

  const signup = await h.inject({
    method: 'POST',
    url: '/api/auth/signup',
    payload: { token: tokenOf(body.invitationUrl), name: 'New Person' }
  })
  t.equal(signup.statusCode, 201, 'the invitee signs up with the link from the e-mail')
  t.match(
    signup.json(), { user: { email: 'new.person@example.com', role: 'member' }, workspace: { id: admin.workspaceId } }
  )

  const again = await invite(h, admin.cookie, { email: 'NEW.PERSON@example.com' })
  t.equal(again.statusCode, 409, 'now a user: 409')
  t.equal(again.json().code, 'USER_EXISTS')
  assertContract(t, 'POST', URL_, again)
})

t.test('every status of postUsersInvite conforms to the contract', async t => {
  const smtp = await startSmtp(t)
  const h = await build(t, { env: { SMTP_URL: smtp.url } })
  const admin = await h.signIn({ role: 'admin' })
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })

  const noSession = await h.inject({ method: 'POST', url: URL_, payload: { email: 'a@example.com' } })
  t.equal(noSession.statusCode, 401)
  assertContract(t, 'POST', URL_, noSession)

  const notAdmin = await invite(h, member.cookie, { email: 'a@example.com' })
  t.equal(notAdmin.statusCode, 403)
  t.equal(notAdmin.json().code, 'INVITE_NOT_ALLOWED', 'a member, under the default policy (admins)')
  assertContract(t, 'POST', URL_, notAdmin)

  const bad = await invite(h, admin.cookie, { email: 'nope' })
  t.equal(bad.statusCode, 400)
  assertContract(t, 'POST', URL_, bad)

  const exists = await invite(h, admin.cookie, { email: member.email.toUpperCase() })
  t.equal(exists.statusCode, 409, 'an existing user, compared case-insensitively')
  t.equal(exists.json().code, 'USER_EXISTS')
  assertContract(t, 'POST', URL_, exists)

  const ok = await invite(h, admin.cookie, { email: 'b@example.com' })
  t.equal(ok.statusCode, 200)
  assertContract(t, 'POST', URL_, ok)
  t.equal((await invitationRows(h, 'b@example.com'))[0]?.status, 'pending')
  const r = await h.db.query<{ role: string }>('SELECT role FROM invitations WHERE email = $1', ['b@example.com'])
  t.equal(r.rows[0]?.role, 'member')
  const noRole = await h.inject({
    method: 'POST',
    url: URL_,
    headers: { cookie: admin.cookie },
    payload: { email: 'c@example.com' }
  })
  t.equal(noRole.statusCode, 400, 'role is required, as the contract reads')
  assertContract(t, 'POST', URL_, noRole)
})

t.test('re-invite: same invitation, fresh token, new expiry, old link dead', async t => {
  const smtp = await startSmtp(t)
  const h = await build(t, { env: { SMTP_URL: smtp.url } })
  const admin = await h.signIn()
  const first = await invite(h, admin.cookie, { email: 'd@example.com', role: 'member' })
  const [before] = await invitationRows(h, 'd@example.com')
  h.clock.advance(DAY)
  const second = await invite(h, admin.cookie, { email: 'd@example.com', role: 'admin' })
  t.equal(second.statusCode, 200)
  assertContract(t, 'POST', URL_, second)
  const rows = await invitationRows(h, 'd@example.com')
  t.equal(rows.length, 1, 'still one invitation')
  t.equal(rows[0]?.id, before?.id, 'same id')
  t.equal(rows[0]?.expires_at.getTime(), h.clock.now().getTime() + 7 * DAY, 'new expiry')
  t.not(first.json().invitationUrl, second.json().invitationUrl, 'fresh link')
  t.equal(first.json().outcome, 'invited', 'the first answer says invited, in a field')
  t.equal(second.json().outcome, 'resent', 'the second says resent, in a field')
  t.equal(smtp.messages.length, 2, 'e-mail re-sent')
  t.ok(smtp.messages[1]?.text.includes(second.json().invitationUrl))

  const old = await h.inject({
    method: 'POST',
    url: '/api/auth/invitation',
    payload: { token: tokenOf(first.json().invitationUrl) }
  })
  t.equal(old.statusCode, 400, 'old link no longer works')
  const fresh = await h.inject({
    method: 'POST',
    url: '/api/auth/invitation',
    payload: { token: tokenOf(second.json().invitationUrl) }
  })
  t.equal(fresh.statusCode, 200)
  t.equal(fresh.json().role, 'admin', 'the re-invite set the role')
  // The fresh link's preview was its first human open.
  t.same(await auditActions(h, before?.id ?? ''), ['invitation.created', 'invitation.resent', 'invitation.viewed'])
})

t.test('20 concurrent invites of one e-mail: one pending invitation, no 5xx', async t => {
  const smtp = await startSmtp(t)
  const h = await build(t, { env: { SMTP_URL: smtp.url } })
  const admin = await h.signIn()
  const all = await Promise.all(
    Array.from({ length: 20 }, async () => await invite(h, admin.cookie, { email: 'race@example.com' }))
  )
  t.same(all.map(r => r.statusCode).filter(s => s !== 200), [], 'every answer is 200')
  for (const r of all) assertContract(t, 'POST', URL_, r)
  const rows = await invitationRows(h, 'race@example.com')
  t.equal(rows.length, 1, 'one invitation row')
  t.equal(rows[0]?.status, 'pending')
  // Exactly one of the 20 links is the live one: the last token written.
  const live = all.filter(r => hashToken(tokenOf(r.json().invitationUrl)) === rows[0]?.token_hash)
  t.equal(live.length, 1, 'exactly one live link')
})

t.test('an expired invitation is refused and a new invite makes a new one', async t => {
  const smtp = await startSmtp(t)
  const h = await build(t, { env: { SMTP_URL: smtp.url, INVITATION_TTL_DAYS: '2' } })
  const admin = await h.signIn()
  const res = await invite(h, admin.cookie, { email: 'e@example.com' })
  const token = tokenOf(res.json().invitationUrl)
  h.clock.advance(2 * DAY - 1000)
  t.equal(
    (await h.inject({ method: 'POST', url: '/api/auth/invitation', payload: { token } })).statusCode, 200,
    'still valid just before expiry'
  )
  h.clock.advance(2000)
  const expired = await h.inject({ method: 'POST', url: '/api/auth/invitation', payload: { token } })
  t.equal(expired.statusCode, 410)
  t.equal(expired.json().code, 'TOKEN_EXPIRED')
  const signup = await h.inject({ method: 'POST', url: '/api/auth/signup', payload: { token } })
  t.equal(signup.statusCode, 410, 'signup refused too')

  const list = await h.inject({
    method: 'GET',
    url: '/api/invitations?status=expired',
    headers: { cookie: admin.cookie }
  })
  t.equal(list.json().items.length, 1, 'listed as expired')
  assertContract(t, 'GET', '/api/invitations?status=expired', list)

  const again = await invite(h, admin.cookie, { email: 'e@example.com' })
  t.equal(again.statusCode, 200)
  const rows = await invitationRows(h, 'e@example.com')
  t.same(rows.map(r => r.status), ['expired', 'pending'], 'the expired invitation stays expired; a new one is pending')
  t.equal(
    (await h.inject({
      method: 'POST',
      url: '/api/auth/invitation',
      payload: { token: tokenOf(again.json().invitationUrl) }
    })).statusCode,
    200
  )
})

t.test('the workspace-invitations throttle: 429 RATE_LIMITED per workspace', async t => {
  const smtp = await startSmtp(t)
  const h = await build(t, { env: { SMTP_URL: smtp.url, INVITE_EMAILS_PER_HOUR: '3' } })
  const admin = await h.signIn()
  const other = await h.signIn({ role: 'admin' })
  const codes: number[] = []
  for (let i = 0; i < 3; i++) codes.push((await invite(h, admin.cookie, { email: `rl${i}@example.com` })).statusCode)
  t.same(codes, [200, 200, 200])
  const over = await invite(h, admin.cookie, { email: 'rl9@example.com' })
  t.equal(over.statusCode, 429)
  t.equal(over.json().code, 'RATE_LIMITED')
  t.ok(Number(over.headers['retry-after']) > 0, 'Retry-After set')
  t.equal(over.headers['x-ratelimit-limit'], '3')
  t.equal(over.headers['x-ratelimit-remaining'], '0')
  assertContract(t, 'POST', URL_, over)
  t.equal((await invitationRows(h, 'rl9@example.com')).length, 0, 'nothing written when throttled')
  t.equal(smtp.messages.length, 3, 'no e-mail sent when throttled')

  // Resend sends invitation e-mail too: it draws on the same hourly budget, already spent.
  const [row] = await invitationRows(h, 'rl0@example.com')
  const resendUrl = `/api/invitations/${row?.id ?? ''}/resend`
  const resend = await h.inject({ method: 'POST', url: resendUrl, headers: { cookie: admin.cookie } })
  assertContract(t, 'POST', resendUrl, resend)
  t.equal(resend.statusCode, 429, 'resend shares the workspace budget with invite')
  t.equal(smtp.messages.length, 3, 'still no e-mail beyond the budget')

  const otherWs = await invite(h, other.cookie, { email: 'rl-other@example.com' })
  t.equal(otherWs.statusCode, 200, 'another workspace has its own budget')
})

t.test('a retry answered from its Idempotency-Key does not draw on the e-mail budget', async t => {
  const smtp = await startSmtp(t)
  const h = await build(t, { env: { SMTP_URL: smtp.url, INVITE_EMAILS_PER_HOUR: '2' } })
  const admin = await h.signIn()
  const first = await invite(h, admin.cookie, { email: 'idem-a@example.com' }, { 'idempotency-key': 'k-1' })
  t.equal(first.statusCode, 200)
  for (let i = 0; i < 3; i++) {
    const retry = await invite(h, admin.cookie, { email: 'idem-a@example.com' }, { 'idempotency-key': 'k-1' })
    t.equal(retry.statusCode, 200, `retry ${i + 1} replays the answer, not 429`)
    t.same(retry.json(), first.json())
  }
  const reused = await invite(h, admin.cookie, { email: 'idem-other@example.com' }, { 'idempotency-key': 'k-1' })
  t.equal(reused.statusCode, 422, 'same key, other body: 422, not counted either')
  t.equal(smtp.messages.length, 1, 'one e-mail for all of that')
  t.equal(
    (await invite(h, admin.cookie, { email: 'idem-b@example.com' }, { 'idempotency-key': 'k-2' })).statusCode, 200,
    'the second e-mail of the hour'
  )
  const over = await invite(h, admin.cookie, { email: 'idem-c@example.com' }, { 'idempotency-key': 'k-3' })
  t.equal(over.statusCode, 429, 'a new key is a new e-mail: over the budget of 2')
  assertContract(t, 'POST', URL_, over)
  const held = await h.db.query("SELECT key FROM idempotency_keys WHERE key = 'k-3'")
  t.equal(held.rows.length, 0, 'a 429 is not the final answer for its key: once the budget refills, the retry runs')
})

t.test('refused invites do not spend the e-mail budget: 5 × 409 USER_EXISTS, then an invite still sends (budget 1)', async t => {
  const smtp = await startSmtp(t)
  const h = await build(t, { env: { SMTP_URL: smtp.url, INVITE_EMAILS_PER_HOUR: '1' } })
  const admin = await h.signIn()
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  const refused: number[] = []
  for (let i = 0; i < 5; i++) {
    refused.push(
      (await invite(h, admin.cookie, { email: member.email, role: 'member' })).statusCode
    )
  }
  t.same(refused, [409, 409, 409, 409, 409])
  const real = await invite(h, admin.cookie, { email: 'budget-real@example.com', role: 'member' })
  t.equal(real.statusCode, 200, 'the one e-mail of the hour is still there')
  t.equal(smtp.messages.length, 1)
  t.equal(
    (await invite(h, admin.cookie, { email: 'budget-next@example.com', role: 'member' })).statusCode, 429,
    'and now it is spent'
  )
})
