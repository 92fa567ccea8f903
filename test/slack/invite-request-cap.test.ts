import t, { type Test } from 'tap'
import { principalOf } from '../helpers/build.js'
import { buildWithSlack, install, slashCommand } from '../helpers/slack.js'
import { isServiceError } from '../../src/errors.js'

// One member under the `request` policy could open any number of invite requests, and each one
// messages every admin: 200 requests were 200 DMs to each admin. INVITE_REQUESTS_PER_MEMBER caps
// the pending requests one member has open, through every door (here Slack's /invite and the
// service itself, concurrently), and asking again for an address already asked for is no new one.

const CAP = 3
const { h, slack } = await buildWithSlack(t, { env: { INVITE_REQUESTS_PER_MEMBER: String(CAP) } })
const admin = await h.signIn({ role: 'admin' })
const admin2 = await h.signIn({ role: 'admin', workspaceId: admin.workspaceId })
const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
const other = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
slack.emails.set('U0ADMIN1', admin.email)
slack.emails.set('U0ADMIN2', admin2.email)
slack.emails.set('U0MEMBER', member.email)
const policy = await h.inject({
  method: 'PATCH', url: '/api/workspace/settings', headers: { cookie: admin.cookie }, payload: { invitePolicy: 'request' }
})
if (policy.statusCode !== 200) throw new Error(`invite policy not set: ${policy.statusCode}`)
// The last await before the first subtest: tap may end the root test at an idle moment after an assertion.
t.equal((await install(h, admin)).statusCode, 302, 'installed')

async function slashInvite (tt: Test, user: string, text: string) {
  const res = await slashCommand(h, slack, user, text)
  tt.equal(res.statusCode, 200, `/invite ${text} acknowledged`)
  await h.app.services.slack.whenIdle()
}

const pending = async (userId: string) => (await h.db.query<{ email: string }>(
  "SELECT email FROM invite_requests WHERE requested_by = $1 AND status = 'pending' ORDER BY email", [userId]
)).rows.map(r => r.email)

await t.test('from Slack: past the cap the member is told why, and no admin is messaged', async t => {
  const dmsBefore = slack.posts().length
  for (let i = 1; i <= CAP + 2; i++) await slashInvite(t, 'U0MEMBER', `person${i}@example.com`)
  t.same(await pending(member.userId), ['person1@example.com', 'person2@example.com', 'person3@example.com'])
  const dms = slack.posts().slice(dmsBefore)
  // Each admin is told at most once an hour (the rest wait for the digest): the first request
  // messages both admins, the next two are held, the refused ones message no one.
  t.equal(dms.length, 2, 'two admins messaged for the first request opened, none for the refused')
  t.match(slack.responses().at(-1), { text: /already have 3 pending invite requests/ })

  // Asking again for an address already asked for answers as before, even at the cap.
  await slashInvite(t, 'U0MEMBER', 'person2@example.com')
  t.match(slack.responses().at(-1), { text: /has already been asked for/ })
})

await t.test('concurrent requests of one member open exactly up to the cap; other members are not counted', async t => {
  const asOther = principalOf(other, 'member')
  const results = await Promise.allSettled(Array.from({ length: 12 }, async (_, i) =>
    await h.app.services.inviteRequests.request(asOther, { email: `burst${i}@example.com`, role: 'member' })))
  const opened = results.filter(r => r.status === 'fulfilled')
  const refused = results.filter(r => r.status === 'rejected').map(r => (r as PromiseRejectedResult).reason as unknown)
  t.equal(opened.length, CAP, 'exactly the cap is opened')
  t.ok(refused.every(e => isServiceError(e) && e.code === 'INVITE_REQUEST_LIMIT_REACHED' && e.statusCode === 409))
  t.equal((await pending(other.userId)).length, CAP)
})

await t.test('a decided request frees a place', async t => {
  const [first] = (await h.db.query<{ id: string }>(
    "SELECT id FROM invite_requests WHERE requested_by = $1 AND status = 'pending' ORDER BY email LIMIT 1", [member.userId]
  )).rows
  const deny = await h.inject({
    method: 'POST',
    url: `/api/invite-requests/${String(first?.id)}/deny`,
    headers: { cookie: admin.cookie, 'content-type': 'application/json' },
    payload: { reason: 'no' }
  })
  t.equal(deny.statusCode, 200)
  const asMember = principalOf(member, 'member')
  const again = await h.app.services.inviteRequests.request(asMember, { email: 'person9@example.com', role: 'member' })
  t.equal(again.created, true)
  await t.rejects(h.app.services.inviteRequests.request(asMember, { email: 'person10@example.com', role: 'member' }),
    { code: 'INVITE_REQUEST_LIMIT_REACHED' })
})
