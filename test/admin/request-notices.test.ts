import t from 'tap'
import { assertContract } from '../helpers/contract.js'
import { build, principalOf } from '../helpers/build.js'
import { startSmtp } from '../helpers/smtp.js'
import { jobsSettled } from '../helpers/jobs.js'
import { until } from '../helpers/service-process.js'

// How admins hear of new invite requests (issue 43): each admin's own choice (GET/PUT
// /api/users/me/notifications), at most one notice an hour and a digest after it, by e-mail through
// the real mailer to the loopback SMTP peer, the digest a job of the job engine claimed by the sweep
// when the service's clock says the hour is over. One app for the file (PGlite, or PostgreSQL with
// TEST_DATABASE_URL).

const URL = '/api/users/me/notifications'
const HOUR = 3_600_000

const smtp = await startSmtp(t)
const h = await build(t, { env: { SMTP_URL: smtp.url, JOBS_POLL_MS: '500' } })
const ada = await h.signIn({ role: 'admin', email: 'ada@example.com' })
const bea = await h.signIn({ role: 'admin', workspaceId: ada.workspaceId, email: 'bea@example.com' })
const member = await h.signIn({ role: 'member', workspaceId: ada.workspaceId, email: 'mo@example.com' })
// An admin who never chooses: the workspace has no Slack, so they hear by e-mail (issue 56: the
// default was Slack, whatever the workspace had, and they heard nothing).
const cy = await h.signIn({ role: 'admin', workspaceId: ada.workspaceId, email: 'cy@example.com' })
t.equal((await h.inject({
  method: 'PATCH', url: '/api/workspace/settings', headers: { cookie: ada.cookie }, payload: { invitePolicy: 'request' }
})).statusCode, 200)

const mailTo = (who: string) => smtp.messages.filter(m => m.to.includes(who))
const ask = async (email: string) =>
  await h.app.services.inviteRequests.request(principalOf(member, 'member'), { email, role: 'member' })

await t.test('each admin\'s choice: Slack by default where it is installed, else e-mail; kept, their own; members and keys are refused', async t => {
  const first = await h.inject({ method: 'GET', url: URL, headers: { cookie: ada.cookie } })
  assertContract(t, 'GET', URL, first)
  t.same(first.json(), { inviteRequests: 'email' }, 'no Slack in this workspace: e-mail')
  const installed = await h.db.query<{ id: string }>(
    `INSERT INTO chat_installations (workspace_id, team_id, bot_token_enc, active, created_at, updated_at)
     VALUES ($1, 'T0NOTICES', 'sealed', true, $2, $2) RETURNING id`, [ada.workspaceId, h.clock.now()])
  t.same((await h.inject({ method: 'GET', url: URL, headers: { cookie: ada.cookie } })).json(), { inviteRequests: 'slack' },
    'once Slack is installed, an admin who never chose hears there')
  const chose = await h.inject({ method: 'PUT', url: URL, headers: { cookie: cy.cookie }, payload: { inviteRequests: 'slack' } })
  t.same(chose.json(), { inviteRequests: 'slack' })
  await h.db.query('DELETE FROM chat_installations WHERE id = $1', [installed.rows[0]?.id])
  t.same((await h.inject({ method: 'GET', url: URL, headers: { cookie: cy.cookie } })).json(), { inviteRequests: 'email' },
    'Slack gone: even who chose it hears by e-mail, not through a Slack that is not there')
  const put = await h.inject({ method: 'PUT', url: URL, headers: { cookie: ada.cookie }, payload: { inviteRequests: 'email' } })
  assertContract(t, 'PUT', URL, put)
  t.same(put.json(), { inviteRequests: 'email' })
  t.same((await h.inject({ method: 'GET', url: URL, headers: { cookie: ada.cookie } })).json(), { inviteRequests: 'email' })
  t.same((await h.inject({ method: 'GET', url: URL, headers: { cookie: bea.cookie } })).json(), { inviteRequests: 'email' },
    'another admin\'s choice is their own')
  const off = await h.inject({ method: 'PUT', url: URL, headers: { cookie: bea.cookie }, payload: { inviteRequests: 'off' } })
  t.same(off.json(), { inviteRequests: 'off' })
  const bad = await h.inject({ method: 'PUT', url: URL, headers: { cookie: ada.cookie }, payload: { inviteRequests: 'sms' } })
  assertContract(t, 'PUT', URL, bad)
  t.equal(bad.statusCode, 400)
  t.match(bad.json().details.errors, [{ in: 'body', field: 'inviteRequests' }])
  const asMember = await h.inject({ method: 'GET', url: URL, headers: { cookie: member.cookie } })
  assertContract(t, 'GET', URL, asMember)
  t.equal(asMember.statusCode, 403)
  const withKey = await h.inject({ method: 'GET', url: URL, headers: { authorization: 'Bearer wsk_0rv3kzc787hn_x' } })
  t.equal(withKey.statusCode, 403)
  t.equal(withKey.json().code, 'API_KEY_NOT_ALLOWED')
})

await t.test('e-mail: the first request at once, the next ones in one digest an hour later, each once; off: nothing', async t => {
  await ask('one@example.com')
  const notice = await until('the notice', async () => mailTo('ada@example.com')[0])
  t.match(notice.subject, /a request to invite one@example\.com waits for you/)
  t.match(notice.text, /one@example\.com as a member/)
  t.match(notice.text, /\/console\/requests/)
  const cys = await until('the notice to the admin who chose Slack, without Slack', async () => mailTo('cy@example.com')[0])
  t.match(cys.subject, /one@example\.com waits for you/, 'by e-mail')
  await h.inject({ method: 'PUT', url: URL, headers: { cookie: cy.cookie }, payload: { inviteRequests: 'off' } })

  // Within the hour: held for the digest.
  await ask('two@example.com')
  await ask('three@example.com')
  h.clock.advance(30 * 60_000)
  t.equal(await h.app.services.inviteRequests.queueDueDigests(), 0, 'no digest before the hour is over')
  // A request decided meanwhile is left out of the digest.
  const four = await ask('four@example.com')
  await h.app.services.inviteRequests.deny(principalOf(ada, 'admin'), four.row.id, {})

  h.clock.advance(30 * 60_000 + 1000)
  t.equal(await h.app.services.inviteRequests.queueDueDigests(), 1, 'one digest claimed')
  t.equal(await h.app.services.inviteRequests.queueDueDigests(), 0, 'claimed once')
  const digest = await until('the digest', async () => mailTo('ada@example.com')[1])
  t.match(digest.subject, /2 invite requests wait for you/)
  t.match(digest.text, /two@example\.com as a member/)
  t.match(digest.text, /three@example\.com as a member/)
  t.notMatch(digest.text, /four@example\.com|one@example\.com/)

  // The digest started a new hour: the next request waits for the one after it.
  await ask('five@example.com')
  h.clock.advance(HOUR)
  t.equal(await h.app.services.inviteRequests.queueDueDigests(), 1)
  const next = await until('the next digest', async () => mailTo('ada@example.com')[2])
  t.match(next.subject, /five@example\.com waits for you/)
  // Nothing more arrives (each request told once): no notice job is left to send one.
  await jobsSettled(h, ['admin-notice'])
  t.equal(mailTo('ada@example.com').length, 3, 'three e-mails in all')
  t.equal(mailTo('bea@example.com').length, 0, 'the admin who chose off heard nothing')
  const held = await h.db.query('SELECT 1 FROM admin_request_notices WHERE user_id = $1', [bea.userId])
  t.equal(held.rows.length, 0, 'nothing held for them either')
})

await t.test('after a quiet hour a request is told at once again', async t => {
  h.clock.advance(HOUR + 1000)
  const before = mailTo('ada@example.com').length
  await ask('six@example.com')
  const mail = await until('the notice', async () => mailTo('ada@example.com')[before])
  t.match(mail.subject, /six@example\.com waits for you/)
  t.equal(await h.app.services.inviteRequests.queueDueDigests(), 0, 'no digest pending')
})
