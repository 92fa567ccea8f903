import t from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { assertContract } from '../helpers/contract.js'
import { principalOf } from '../helpers/build.js'
import { startSmtp } from '../helpers/smtp.js'
import { SIGNING_SECRET, TEAM_ID, buildWithSlack, install } from '../helpers/slack.js'
import { slackSignature } from '../../src/slack/signature.js'
import { until } from '../helpers/service-process.js'

// Slack as the admin's console: the slash command, Block Kit buttons and modals, invite requests
// under the `request` policy, the App Home, against the loopback fake of Slack's Web API. Every
// request is signed over its raw form body as Slack signs it, and shaped like Slack's documented
// slash-command, block_actions and view_submission payloads.

const COMMANDS = '/api/slack/commands'
const INTERACTIONS = '/api/slack/interactions'

const smtp = await startSmtp(t)
const { h, slack } = await buildWithSlack(t, { env: { SMTP_URL: smtp.url } })
const admin = await h.signIn({ role: 'admin' })
const admin2 = await h.signIn({ role: 'admin', workspaceId: admin.workspaceId })
const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
// The last await before the first subtest: tap may end the root test at an idle moment after an assertion.
t.equal((await install(h, admin)).statusCode, 302, 'installed')
slack.emails.set('U0ADMIN1', admin.email)
slack.emails.set('U0ADMIN2', admin2.email)
slack.emails.set('U0MEMBER', member.email)
const idle = async () => { await h.app.services.slack.whenIdle() }
let seq = 0

/** POST a form to a Slack endpoint, signed like Slack does unless told otherwise. */
async function signedForm (
  url: string,
  fields: Record<string, string>,
  o: { secret?: string, skewSeconds?: number, raw?: string, signBody?: string } = {}
): Promise<LightMyRequestResponse> {
  const payload = o.raw ?? new URLSearchParams(fields).toString()
  const ts = String(Math.floor(h.clock.now().getTime() / 1000) + (o.skewSeconds ?? 0))
  return await h.inject({
    method: 'POST',
    url,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': ts,
      'x-slack-signature': slackSignature(o.secret ?? SIGNING_SECRET, ts, o.signBody ?? payload)
    },
    payload
  })
}

/** A slash command as Slack posts it (docs.slack.dev, "Implementing slash commands"). */
function command (user: string, text: string): Record<string, string> {
  seq++
  return {
    token: 'gIkuvaNzQIHg97ATvDxqgjtO',
    team_id: TEAM_ID,
    team_domain: 'acme',
    enterprise_id: '',
    channel_id: 'C0CHAN01',
    channel_name: 'general',
    user_id: user,
    user_name: 'someone',
    command: '/invite',
    text,
    api_app_id: 'A0APP001',
    is_enterprise_install: 'false',
    response_url: slack.responseUrl(),
    trigger_id: `13345224609.738474920.${seq}`
  }
}

/** A block_actions payload for a button click in a message (docs.slack.dev, block_actions payload). */
function click (user: string, actionId: string, value: string, where: { channel: string, ts: string }) {
  seq++
  return {
    type: 'block_actions',
    user: { id: user, username: 'someone', name: 'someone', team_id: TEAM_ID },
    api_app_id: 'A0APP001',
    token: 'gIkuvaNzQIHg97ATvDxqgjtO',
    container: { type: 'message', message_ts: where.ts, channel_id: where.channel, is_ephemeral: false },
    trigger_id: `13345224609.738474920.${seq}`,
    team: { id: TEAM_ID, domain: 'acme' },
    channel: { id: where.channel, name: 'directmessage' },
    message: { type: 'message', ts: where.ts, text: 'request' },
    response_url: slack.responseUrl(),
    actions: [{
      type: 'button',
      action_id: actionId,
      block_id: 'invite_request',
      value,
      text: { type: 'plain_text', text: 'Approve', emoji: true },
      action_ts: '1700000100.000001'
    }]
  }
}

/** A view_submission payload (docs.slack.dev, view_submission payload). */
function submission (user: string, callbackId: string, values: Record<string, Record<string, unknown>>, meta = '') {
  seq++
  return {
    type: 'view_submission',
    team: { id: TEAM_ID, domain: 'acme' },
    user: { id: user, username: 'someone', name: 'someone', team_id: TEAM_ID },
    api_app_id: 'A0APP001',
    token: 'gIkuvaNzQIHg97ATvDxqgjtO',
    trigger_id: `13345224609.738474920.${seq}`,
    view: {
      id: 'V0VIEW01',
      type: 'modal',
      callback_id: callbackId,
      private_metadata: meta,
      state: { values },
      hash: '156772938.1827394'
    }
  }
}

const interact = async (payload: unknown, o: Parameters<typeof signedForm>[2] = {}) =>
  await signedForm(INTERACTIONS, { payload: JSON.stringify(payload) }, o)

async function rows (sql: string, params: unknown[] = []) {
  return (await h.db.query<Record<string, unknown>>(sql, params)).rows
}

const invitations = async () => await rows(
  'SELECT email, role, invited_by, delivery_status FROM invitations WHERE workspace_id = $1 ORDER BY email',
  [admin.workspaceId]
)

async function setPolicy (policy: string) {
  const res = await h.inject({
    method: 'PATCH', url: '/api/workspace/settings', headers: { cookie: admin.cookie }, payload: { invitePolicy: policy }
  })
  t.equal(res.statusCode, 200)
  assertContract(t, 'PATCH', '/api/workspace/settings', res)
}

await t.test('forged, stale or re-serialized signatures → 401 on both endpoints, nothing recorded', async t => {
  const form = command('U0ADMIN1', 'forged@example.com')
  const raw = new URLSearchParams(form).toString()
  const payload = { payload: JSON.stringify(click('U0ADMIN1', 'request_approve_member', 'x', { channel: 'D1', ts: '1' })) }
  const rawPayload = new URLSearchParams(payload).toString()
  const cases: Array<[string, string, Record<string, string>, Parameters<typeof signedForm>[2]]> = [
    ['command, wrong secret', COMMANDS, form, { secret: 'not-the-signing-secret' }],
    ['command, 6 minutes old', COMMANDS, form, { skewSeconds: -6 * 60 }],
    // The same fields in another order and encoding: what was signed is the bytes, not the meaning.
    ['command, re-serialized', COMMANDS, form, { raw: raw.replaceAll('%40', '@').split('&').reverse().join('&'), signBody: raw }],
    ['interaction, wrong secret', INTERACTIONS, payload, { secret: 'not-the-signing-secret' }],
    ['interaction, 6 minutes ahead', INTERACTIONS, payload, { skewSeconds: 6 * 60 }],
    ['interaction, re-serialized', INTERACTIONS, payload, {
      raw: new URLSearchParams({ payload: JSON.stringify(JSON.parse(payload.payload), null, 1) }).toString(),
      signBody: rawPayload
    }]
  ]
  for (const [name, url, fields, o] of cases) {
    const res = await signedForm(url, fields, o)
    t.equal(res.statusCode, 401, name)
    t.same(res.json(), { message: 'Request signature verification failed', code: 'SIGNATURE_INVALID' }, name)
    assertContract(t, 'POST', url, res, `${name}: conforms`)
  }
  const json = await h.inject({
    method: 'POST', url: COMMANDS, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(form)
  })
  t.equal(json.statusCode, 415, 'JSON is not what Slack sends to a command URL')
  const formElsewhere = await h.inject({
    method: 'POST',
    url: '/api/users/invite',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: admin.cookie },
    payload: 'email=a%40example.com&role=member'
  })
  t.equal(formElsewhere.statusCode, 415, 'a form cannot drive a JSON operation')
  await idle()
  t.same(await rows('SELECT event_id FROM chat_events'), [], 'nothing recorded')
  t.same(await invitations(), [], 'nothing created')
})

await t.test('admin /invite → acknowledged at once, invitation + e-mail, outcome on response_url', async t => {
  const form = command('U0ADMIN1', '<mailto:Ada@Example.com|Ada@Example.com> admin')
  const before = smtp.messages.length
  const res = await signedForm(COMMANDS, form)
  t.equal(res.statusCode, 200)
  assertContract(t, 'POST', COMMANDS, res)
  t.same(res.json(), { response_type: 'ephemeral', text: 'Inviting ada@example.com as admin…' })
  await idle()
  t.match(await invitations(), [{ email: 'ada@example.com', role: 'admin', invited_by: admin.userId, delivery_status: 'sent' }])
  const mail = await smtp.nextMessage(before)
  t.same(mail.to, ['ada@example.com'], 'the invitation e-mail went out')
  const answer = slack.fake.requests.find(r => String(form.response_url).endsWith(r.path))
  t.match(answer?.json, { response_type: 'ephemeral', text: /Invited ada@example\.com as admin/ })
  t.notMatch(JSON.stringify(answer?.json), /token=/, 'no signup link in Slack')
})

await t.test('/invite text is checked by the REST validator before the acknowledgement', async t => {
  for (const text of ['', 'not-an-address', 'a,b@example.com', ' ada@example.com superuser', 'ü@ex ample.com']) {
    const res = await signedForm(COMMANDS, command('U0ADMIN1', text))
    t.equal(res.statusCode, 200, JSON.stringify(text))
    t.match(res.json(), { response_type: 'ephemeral', text: /Usage: `\/invite/ }, `${JSON.stringify(text)}: usage`)
  }
  await idle()
  t.equal((await invitations()).length, 1, 'nothing more created')
})

await t.test('member under the default policy is refused; under `members` invites members', async t => {
  let res = await signedForm(COMMANDS, command('U0MEMBER', 'bob@example.com'))
  t.equal(res.statusCode, 200)
  await idle()
  t.match(slack.responses().at(-1), { text: /only admins/ })
  await setPolicy('members')
  res = await signedForm(COMMANDS, command('U0MEMBER', 'bob@example.com admin'))
  await idle()
  t.match(slack.responses().at(-1), { text: /only admins can invite admins/ })
  res = await signedForm(COMMANDS, command('U0MEMBER', 'bob@example.com'))
  await idle()
  t.match(slack.responses().at(-1), { text: /Invited bob@example\.com as member/ })
  t.match((await invitations()).map(i => [i.email, i.invited_by]), [['ada@example.com', admin.userId], ['bob@example.com', member.userId]])
})

await t.test('member under `request` → request, admins DMed with buttons, approve → invitation, requester DMed', async t => {
  await setPolicy('request')
  const postsBefore = slack.posts().length
  const res = await signedForm(COMMANDS, command('U0MEMBER', 'carol@example.com'))
  t.equal(res.statusCode, 200)
  await idle()
  t.match(slack.responses().at(-1), { text: /Asked the workspace's admins to invite carol@example\.com/ })
  t.same((await invitations()).map(i => i.email), ['ada@example.com', 'bob@example.com'], 'no invitation yet')
  const [request] = await rows("SELECT id, status, requested_by FROM invite_requests WHERE email = 'carol@example.com'")
  t.match(request, { status: 'pending', requested_by: member.userId })
  const requestId = String(request?.id)

  const dms = slack.posts().slice(postsBefore)
  t.same(dms.map(p => p.channel).sort(), ['U0ADMIN1', 'U0ADMIN2'], 'each admin got a DM')
  const buttons = (dms[0]?.blocks ?? []).find(b => b.type === 'actions') as { elements: Array<Record<string, unknown>> }
  t.match(buttons.elements, [
    { action_id: 'request_approve_member', value: requestId, text: { text: 'Approve as member' } },
    { action_id: 'request_approve_admin', value: requestId, text: { text: 'Approve as admin' } },
    { action_id: 'request_deny', value: requestId, text: { text: 'Deny' } }
  ])

  const list = await h.inject({ method: 'GET', url: '/api/invite-requests?status=pending', headers: { cookie: admin.cookie } })
  t.equal(list.statusCode, 200)
  assertContract(t, 'GET', '/api/invite-requests', list)
  t.match(list.json().items, [{ id: requestId, email: 'carol@example.com', role: 'member', status: 'pending' }])

  await t.test('a member clicking Approve is refused (ephemeral) and nothing is created', async t => {
    const c = click('U0MEMBER', 'request_approve_member', requestId, { channel: 'DADMIN1', ts: '1700000000.000001' })
    const r = await interact(c)
    t.equal(r.statusCode, 200)
    assertContract(t, 'POST', INTERACTIONS, r)
    await idle()
    const answer = slack.fake.requests.find(q => c.response_url.endsWith(q.path))
    t.match(answer?.json, { response_type: 'ephemeral', replace_original: false, text: /only admins/ })
    t.match(await rows('SELECT status FROM invite_requests WHERE id = $1', [requestId]), [{ status: 'pending' }])
    t.equal((await invitations()).length, 2)
  })

  const updatesBefore = slack.args('chat.update').length
  const dmsBefore = slack.posts().length
  const first = dms.find(p => p.channel === 'U0ADMIN1')
  const approve = click('U0ADMIN1', 'request_approve_admin', requestId, { channel: 'DADMIN1', ts: String(first?.ts ?? '') })
  t.equal((await interact(approve)).statusCode, 200)
  await idle()
  t.match(await invitations(), [{}, {}, { email: 'carol@example.com', role: 'admin', invited_by: admin.userId }])
  const updates = slack.args('chat.update').slice(updatesBefore)
  t.equal(updates.length, 2, "both admins' messages updated")
  for (const u of updates) {
    t.match(u.text, /Approved by <@U0ADMIN1>/)
    t.notOk((u.blocks ?? []).some(b => b.type === 'actions'), 'no buttons left')
  }
  const toRequester = slack.posts().slice(dmsBefore).find(p => p.channel === 'U0MEMBER')
  t.match(toRequester?.text, /carol@example\.com was approved by <@U0ADMIN1>/)
  t.match(slack.args('views.publish').at(-1), { user_id: 'U0ADMIN1', view: { type: 'home' } }, 'App Home refreshed')
  const audit = await rows('SELECT action FROM audit_events WHERE target_id = $1 ORDER BY created_at, id', [requestId])
  t.same(audit.map(a => a.action), ['invite_request.created', 'invite_request.approved'])
  t.same(
    await rows("SELECT event_id, status FROM chat_events WHERE event_id LIKE 'notice:%' AND event_id LIKE $1 ORDER BY event_id",
      [`%${requestId}`]),
    [{ event_id: `notice:approved:${requestId}`, status: 'processed' }, { event_id: `notice:created:${requestId}`, status: 'processed' }],
    'the notices went through the durable queue (a restart would pick them up)'
  )

  await t.test('a second click after the decision changes nothing', async t => {
    const again = click('U0ADMIN2', 'request_approve_member', requestId, { channel: 'DADMIN2', ts: '1' })
    t.equal((await interact(again)).statusCode, 200)
    await idle()
    const answer = slack.fake.requests.find(q => again.response_url.endsWith(q.path))
    t.match(answer?.json, { text: /approved, not pending/ })
    t.equal((await invitations()).filter(i => i.email === 'carol@example.com').length, 1)
  })
})

await t.test('two admins approving at once → one invitation, the other 409', async t => {
  const { row } = await h.app.services.inviteRequests.request(
    principalOf(member, 'member'),
    { email: 'dave@example.com', role: 'member' }
  )
  const before = smtp.messages.length
  const results = await Promise.all([admin, admin2, admin, admin2].map(async a => await h.inject({
    method: 'POST', url: `/api/invite-requests/${row.id}/approve`, headers: { cookie: a.cookie }, payload: {}
  })))
  for (const r of results) assertContract(t, 'POST', '/api/invite-requests/{requestId}/approve', r)
  t.same(results.map(r => r.statusCode).sort(), [200, 409, 409, 409])
  t.match(results.find(r => r.statusCode === 409)?.json(), { code: 'INVITE_REQUEST_NOT_PENDING' })
  await idle()
  t.equal((await invitations()).filter(i => i.email === 'dave@example.com').length, 1, 'one invitation')
  t.equal(smtp.messages.length - before, 1, 'one e-mail')
})

await t.test('Deny opens a modal; its submission denies with the reason and tells the requester', async t => {
  const { row } = await h.app.services.inviteRequests.request(
    principalOf(member, 'member', 'chat'),
    { email: 'eve@example.com', role: 'member' }
  )
  await idle()
  const c = click('U0ADMIN2', 'request_deny', row.id, { channel: 'DADMIN2', ts: '1' })
  t.equal((await interact(c)).statusCode, 200)
  await idle()
  const opened = slack.args('views.open').at(-1)
  t.match(opened, { trigger_id: c.trigger_id, view: { type: 'modal', callback_id: 'deny_request', private_metadata: row.id } })
  const submit = submission('U0ADMIN2', 'deny_request', { reason: { reason: { type: 'plain_text_input', value: 'Use a guest account' } } }, row.id)
  const res = await interact(submit)
  t.equal(res.statusCode, 200)
  t.same(res.json(), {}, 'an empty answer closes the modal')
  await idle()
  t.match(await rows('SELECT status, reason, decided_by FROM invite_requests WHERE id = $1', [row.id]),
    [{ status: 'denied', reason: 'Use a guest account', decided_by: admin2.userId }])
  t.match(slack.posts().at(-1), { channel: 'U0MEMBER', text: /eve@example\.com was denied by <@U0ADMIN2>\. Reason: Use a guest account/ })
  t.notOk((await invitations()).some(i => i.email === 'eve@example.com'))
})

await t.test('App Home and the Invite people modal', async t => {
  const opened = { type: 'event_callback', team_id: TEAM_ID, event_id: `EvHome${seq++}`, event: { type: 'app_home_opened', user: 'U0ADMIN1', tab: 'home', channel: 'D0HOME' } }
  const ts = String(Math.floor(h.clock.now().getTime() / 1000))
  const body = JSON.stringify(opened)
  const res = await h.inject({
    method: 'POST',
    url: '/api/slack/events',
    headers: { 'content-type': 'application/json', 'x-slack-request-timestamp': ts, 'x-slack-signature': slackSignature(SIGNING_SECRET, ts, body) },
    payload: body
  })
  t.equal(res.statusCode, 200)
  await idle()
  const home = slack.args('views.publish').at(-1)
  t.equal(home?.user_id, 'U0ADMIN1')
  const text = JSON.stringify(home?.view)
  t.match(text, /open_invite_modal/, 'Invite people button')
  t.match(text, /invitation_resend/, 'Resend buttons')
  t.match(text, /invitation_revoke/, 'Revoke buttons')

  const bad = await interact(submission('U0ADMIN1', 'invite_people', {
    emails: { emails: { type: 'plain_text_input', value: 'frank@example.com, nope@' } },
    role: { role: { type: 'static_select', selected_option: { value: 'member' } } }
  }))
  t.equal(bad.statusCode, 200)
  assertContract(t, 'POST', INTERACTIONS, bad)
  t.same(bad.json(), { response_action: 'errors', errors: { emails: 'Not an e-mail address: nope@' } })
  const good = await interact(submission('U0ADMIN1', 'invite_people', {
    emails: { emails: { type: 'plain_text_input', value: 'frank@example.com\ngrace@example.com' } },
    role: { role: { type: 'static_select', selected_option: { value: 'member' } } }
  }))
  t.same(good.json(), {})
  await idle()
  t.match((await invitations()).filter(i => ['frank@example.com', 'grace@example.com'].includes(String(i.email))), [
    { email: 'frank@example.com', role: 'member' }, { email: 'grace@example.com', role: 'member' }
  ])
})

await t.test('workspace settings: admin only, validated, audited', async t => {
  const get = await h.inject({ method: 'GET', url: '/api/workspace/settings', headers: { cookie: admin.cookie } })
  t.equal(get.statusCode, 200)
  assertContract(t, 'GET', '/api/workspace/settings', get)
  t.match(get.json(), {
    invitePolicy: 'request', slack: { available: true, installed: true, teamName: String, installedAt: String }
  }, 'the Slack installation, read-only')
  const asMember = await h.inject({ method: 'GET', url: '/api/workspace/settings', headers: { cookie: member.cookie } })
  t.equal(asMember.statusCode, 403)
  const bad = await h.inject({
    method: 'PATCH', url: '/api/workspace/settings', headers: { cookie: admin.cookie }, payload: { invitePolicy: 'anyone' }
  })
  t.equal(bad.statusCode, 400)
  assertContract(t, 'PATCH', '/api/workspace/settings', bad)
  const audit = await rows("SELECT payload FROM audit_events WHERE action = 'workspace.settings_changed' ORDER BY created_at, id")
  t.match(audit.map(a => a.payload), [{ invitePolicy: { from: 'admins', to: 'members' } }, { invitePolicy: { from: 'members', to: 'request' } }])
})

await t.test('the inviter is told in a DM: invitation accepted, delivery failed', async t => {
  const before = smtp.messages.length
  t.equal((await signedForm(COMMANDS, command('U0ADMIN2', 'heidi@example.com'))).statusCode, 200)
  await idle()
  const mail = await smtp.nextMessage(before)
  const token = /token=([A-Za-z0-9_-]+)/.exec(mail.text)?.[1] ?? ''
  const accepted = await h.inject({ method: 'POST', url: '/api/auth/signup', payload: { token, name: 'Heidi' } })
  t.equal(accepted.statusCode, 201, 'signed up')
  await idle()
  t.match(slack.posts().at(-1), { channel: 'U0ADMIN2', text: 'heidi@example.com accepted your invitation and has joined the workspace.' })

  smtp.mode = 'reject-rcpt'
  t.teardown(() => { smtp.mode = 'accept' })
  t.equal((await signedForm(COMMANDS, command('U0ADMIN2', 'ivan@example.com'))).statusCode, 200)
  await idle()
  t.match(slack.responses().at(-1), { text: /Could not invite ivan@example\.com: Sending the e-mail failed/ })
  t.match(slack.posts().at(-1), { channel: 'U0ADMIN2', text: /Your invitation to ivan@example\.com could not be delivered/ })
})

await t.test('a request expires after 7 days: listed as expired, approving it is 409, a new one can be made', async t => {
  const asMember = principalOf(member, 'member', 'chat')
  const { row } = await h.app.services.inviteRequests.request(asMember, { email: 'judy@example.com', role: 'member' })
  h.clock.advance(7 * 86_400_000 + 1000)
  t.teardown(() => { h.clock.advance(-(7 * 86_400_000 + 1000)) })
  // Sessions last 7 days too: fresh ones, after the jump.
  const later = await h.signIn({ role: 'admin', workspaceId: admin.workspaceId })
  const laterMember = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  const expired = await h.inject({ method: 'GET', url: '/api/invite-requests?status=expired', headers: { cookie: later.cookie } })
  t.match(expired.json().items, [{ id: row.id, status: 'expired' }])
  const approve = await h.inject({
    method: 'POST', url: `/api/invite-requests/${row.id}/approve`, headers: { cookie: later.cookie }, payload: {}
  })
  t.equal(approve.statusCode, 409)
  t.same(approve.json(), { message: 'The invite request is expired, not pending', code: 'INVITE_REQUEST_NOT_PENDING' })
  const again = await h.app.services.inviteRequests.request(asMember, { email: 'judy@example.com', role: 'member' })
  t.ok(again.created, 'a fresh request replaces the expired one')
  t.not(again.row.id, row.id)
  const deny = await h.inject({
    method: 'POST', url: '/api/invite-requests/6f1c8a52-7d0e-4d8b-9a57-2b0b0e4a0c11/deny', headers: { cookie: later.cookie }, payload: {}
  })
  t.equal(deny.statusCode, 404)
  assertContract(t, 'POST', '/api/invite-requests/{requestId}/deny', deny)
  const asMemberRest = await h.inject({
    method: 'POST', url: `/api/invite-requests/${again.row.id}/approve`, headers: { cookie: laterMember.cookie }, payload: {}
  })
  t.equal(asMemberRest.statusCode, 403, 'members cannot approve through REST either')
  await idle()
})

await t.test('a button value that names no request of this workspace is told as not found, nothing else', async t => {
  const c = click('U0ADMIN1', 'request_approve_member', 'not-a-request-id', { channel: 'DADMIN1', ts: '1' })
  t.equal((await interact(c)).statusCode, 200)
  const d = click('U0ADMIN1', 'request_deny', '6f1c8a52-7d0e-4d8b-9a57-2b0b0e4a0c11', { channel: 'DADMIN1', ts: '1' })
  t.equal((await interact(d)).statusCode, 200)
  await idle()
  t.match(slack.fake.requests.find(q => c.response_url.endsWith(q.path))?.json, { text: /Invite request not found/ })
  t.match(slack.fake.requests.find(q => d.response_url.endsWith(q.path))?.json, { text: /no longer open/ })
  const bad = await signedForm(INTERACTIONS, { payload: '[1,2]' })
  t.equal(bad.statusCode, 400)
  assertContract(t, 'POST', INTERACTIONS, bad)
})

await t.test('Slack answering 429 with Retry-After: the SDK waits and retries, the message arrives once', async t => {
  // Each admin hears at most once an hour (earlier requests of this file went to their digests):
  // their last notice was two hours ago, so this request is told at once.
  await h.db.query('UPDATE admin_notice_settings SET last_notice_at = $1, digest_due_at = NULL',
    [new Date(h.clock.now().getTime() - 2 * 3_600_000)])
  const before = slack.calls('chat.postMessage').length
  slack.rateLimitPosts = 1
  t.equal((await signedForm(COMMANDS, command('U0MEMBER', 'kim@example.com'))).statusCode, 200)
  await idle()
  const posts = slack.posts().slice(before)
  t.equal(posts.length, 3, 'two DMs to admins, the first tried twice')
  t.equal(slack.rateLimitPosts, 0, 'the 429 was answered')
  // Both admins, one of them twice (whichever the 429 answered: the admins are messaged in no set order).
  const tries = new Map<string, number>()
  for (const p of posts) tries.set(p.channel, (tries.get(p.channel) ?? 0) + 1)
  t.same([...tries.keys()].sort(), ['U0ADMIN1', 'U0ADMIN2'])
  t.same([...tries.values()].sort(), [1, 2])
  const stored = await rows("SELECT jsonb_array_length(chat_messages) AS n FROM invite_requests WHERE email = 'kim@example.com'")
  t.same(stored, [{ n: 2 }], 'one message per admin remembered: the 429 was not taken as a post')
})

await t.test('within the hour after a notice, requests reach each admin as one digest DM when the hour ends', async t => {
  const before = slack.posts().length
  await h.app.services.inviteRequests.request(principalOf(member, 'member'), { email: 'lee@example.com', role: 'member' })
  await h.app.services.inviteRequests.request(principalOf(member, 'member'), { email: 'max@example.com', role: 'member' })
  await idle()
  t.equal(slack.posts().length, before, 'nothing yet: the kim@ request was told less than an hour ago')
  h.clock.advance(3_600_000)
  t.teardown(() => { h.clock.advance(-3_600_000) })
  // Three admins: the third (signed in by the expiry test) is unknown to Slack, so gets no DM.
  t.equal(await h.app.services.inviteRequests.queueDueDigests(), 3, 'one digest per admin')
  const dms = await until('both digests', async () => {
    const p = slack.posts().slice(before)
    return p.length >= 2 ? p : undefined
  })
  t.same(dms.map(p => p.channel).sort(), ['U0ADMIN1', 'U0ADMIN2'])
  for (const dm of dms) t.match(dm.text, /2 invite requests wait for a decision:\n• lee@example\.com as a member\n• max@example\.com as a member/)
})

await t.test('a suspended admin is answered as a stranger: /invite and a button click do nothing', async t => {
  // An admin of the workspace known to Slack, suspended: Slack still names them, we do not.
  const admin3 = await h.signIn({ role: 'admin', workspaceId: admin.workspaceId })
  const asker = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  slack.emails.set('U0ADMIN3', admin3.email)
  slack.emails.set('U0STRANGE', 'stranger@elsewhere.example')
  await setPolicy('request')
  const { row } = await h.app.services.inviteRequests.request(
    principalOf(asker, 'member'), { email: 'olga@example.com', role: 'member' }
  )
  const suspend = await h.inject({ method: 'POST', url: `/api/users/${admin3.userId}/suspend`, headers: { cookie: admin.cookie } })
  t.equal(suspend.statusCode, 200)
  const before = await invitations()

  /** What Slack shows the person after they acted: the ephemeral answer on their response_url. */
  const answerTo = (responseUrl: string) => slack.fake.requests.find(q => responseUrl.endsWith(q.path))?.json as
    { text?: string } | undefined
  const invite = async (user: string) => {
    const form = command(user, 'pavel@example.com')
    const res = await signedForm(COMMANDS, form)
    t.equal(res.statusCode, 200, `${user}: acknowledged`)
    await idle()
    return { ack: res.json(), answer: answerTo(String(form.response_url)) }
  }
  // Slack retries a click with its message and action as they were: each click here is on a message of its own.
  let message = 0
  const approve = async (user: string) => {
    const c = click(user, 'request_approve_member', row.id, { channel: 'DADMIN3', ts: `1700000000.00010${++message}` })
    t.equal((await interact(c)).statusCode, 200, `${user}: acknowledged`)
    await idle()
    return answerTo(c.response_url)
  }

  const stranger = await invite('U0STRANGE')
  const suspended = await invite('U0ADMIN3')
  t.ok(stranger.answer?.text !== undefined, `the stranger is answered: ${stranger.answer?.text ?? ''}`)
  t.same(suspended, stranger, '/invite: the suspended admin gets the stranger\'s answer, word for word')
  const strangerClick = await approve('U0STRANGE')
  t.ok(strangerClick?.text !== undefined, `the stranger's click is answered: ${strangerClick?.text ?? ''}`)
  t.same(await approve('U0ADMIN3'), strangerClick, 'Approve: the same answer as the stranger\'s')
  t.same(await invitations(), before, 'no invitation')
  t.match(await rows('SELECT status FROM invite_requests WHERE id = $1', [row.id]), [{ status: 'pending' }], 'still pending')

  // The refusal was the suspension: reactivated, the same admin is an admin in Slack again.
  const back = await h.inject({ method: 'POST', url: `/api/users/${admin3.userId}/reactivate`, headers: { cookie: admin.cookie } })
  t.equal(back.statusCode, 200)
  await approve('U0ADMIN3')
  t.match(await rows('SELECT status, decided_by FROM invite_requests WHERE id = $1', [row.id]),
    [{ status: 'approved', decided_by: admin3.userId }], 'reactivated: the same click approves')
})
