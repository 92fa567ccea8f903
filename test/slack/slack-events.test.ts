import t from 'tap'
import { Writable } from 'node:stream'
import { build, testDatabase } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import {
  BOT_USER_ID, CLIENT_SECRET, SIGNING_SECRET, TEAM_ID, buildWithSlack, envelope, install, mention, sendEvent, slackEnv,
  startSlackFake
} from '../helpers/slack.js'
import { insertChatEvent } from '../../src/db/chat-events.js'
import type { TestApp } from '../helpers/build.js'

// Slack event intake: signature, url_verification, durable dedupe by event_id, processing after
// the acknowledgement, uninstall, and the bot's `invite` command, against a loopback fake of Slack.

const EVENTS = '/api/slack/events'

async function eventRows (h: TestApp) {
  return (await h.db.query<{
    event_id: string,
    status: string,
    error: string | null,
    payload: Record<string, unknown>
  }>('SELECT * FROM chat_events ORDER BY received_at')).rows
}

async function invitationsOf (h: TestApp, workspaceId: string) {
  return (await h.db.query<{ email: string, role: string, invited_by: string }>(
    'SELECT email, role, invited_by FROM invitations WHERE workspace_id = $1 ORDER BY email', [workspaceId]
  )).rows
}

// One app for most cases; the log capture checks everything the cases below write to the log.
let logged = ''
const stream = new Writable({ write (chunk, _enc, cb) { logged += String(chunk); cb() } })
const { h, slack } = await buildWithSlack(t, { logger: { level: 'trace', stream } })
const admin = await h.signIn({ role: 'admin' })
t.equal((await install(h, admin)).statusCode, 302, 'installed')
slack.emails.set('U0ADMIN1', admin.email.toUpperCase())
const idle = async () => { await h.app.services.slack.whenIdle() }

await t.test('signature: valid passes; wrong secret, stale, future, re-serialized body and missing headers → 401', async t => {
  const body = { type: 'url_verification', challenge: 'c'.repeat(40), token: 'legacy' }
  const ok = await sendEvent(h, body)
  t.equal(ok.statusCode, 200)
  t.same(ok.json(), { challenge: 'c'.repeat(40) }, 'url_verification answers its challenge')
  assertContract(t, 'POST', EVENTS, ok)
  t.equal((await sendEvent(h, body, { skewSeconds: -4 * 60 })).statusCode, 200, '4 minutes old is fine')
  t.equal((await sendEvent(h, body, { skewSeconds: 4 * 60 })).statusCode, 200, '4 minutes ahead is fine')

  const raw = JSON.stringify(body)
  const cases: Array<[string, Parameters<typeof sendEvent>[2]]> = [
    ['wrong secret', { secret: 'not-the-signing-secret' }],
    ['stale: 6 minutes old', { skewSeconds: -6 * 60 }],
    ['future: 6 minutes ahead', { skewSeconds: 6 * 60 }],
    ['same JSON re-serialized (signed over the original bytes)', { raw: JSON.stringify(body, null, 2), signBody: raw }],
    ['no signature header', { headers: { 'x-slack-signature': undefined } }],
    ['no timestamp header', { headers: { 'x-slack-request-timestamp': undefined } }],
    ['no headers at all', { headers: { 'x-slack-signature': undefined, 'x-slack-request-timestamp': undefined } }],
    ['a timestamp that is not a number', { headers: { 'x-slack-request-timestamp': 'soon' } }],
    ['signature without the v0= prefix', { headers: { 'x-slack-signature': 'deadbeef' } }]
  ]
  for (const [name, o] of cases) {
    const res = await sendEvent(h, body, o)
    t.equal(res.statusCode, 401, name)
    t.same(res.json(), { message: 'Request signature verification failed', code: 'SIGNATURE_INVALID' }, name)
    assertContract(t, 'POST', EVENTS, res, `${name}: conforms`)
  }
  const unsignedEvent = await sendEvent(h, envelope(mention('U0ADMIN1', 'help')), { secret: 'nope' })
  t.equal(unsignedEvent.statusCode, 401)
  await idle()
  t.equal((await eventRows(h)).length, 0, 'nothing recorded from an unsigned request')
})

await t.test('an event is acknowledged at once and processed after the acknowledgement', async t => {
  slack.postDelayMs = 1500
  const before = slack.posts().length
  const started = Date.now()
  const res = await sendEvent(h, envelope(mention('U0ADMIN1', 'hello there')))
  const took = Date.now() - started
  t.equal(res.statusCode, 200)
  t.same(res.json(), { ok: true })
  assertContract(t, 'POST', EVENTS, res)
  t.ok(took < 1000, `acknowledged in ${took} ms while the reply takes 1.5 s`)
  const rows = await eventRows(h)
  t.equal(rows.length, 1, 'recorded before the acknowledgement')
  await idle()
  slack.postDelayMs = 0
  const posts = slack.posts().slice(before)
  t.equal(posts.length, 1)
  t.match(posts[0]?.text, /invite someone@example\.com/, 'unrecognised text gets the help reply')
  t.equal(posts[0]?.authorization, `Bearer ${slack.botToken}`, 'with the decrypted bot token')
  t.equal((await eventRows(h))[0]?.status, 'processed')
})

await t.test('a duplicate event_id (a retry) is acknowledged and processed once', async t => {
  const before = slack.posts().length
  const ev = envelope(mention('U0ADMIN1', 'what can you do?'))
  const first = await sendEvent(h, ev)
  const retry = await sendEvent(
    h, ev, { headers: { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' } }
  )
  const again = await sendEvent(h, ev)
  for (const res of [first, retry, again]) {
    t.equal(res.statusCode, 200)
    t.same(res.json(), { ok: true })
    assertContract(t, 'POST', EVENTS, res)
  }
  await idle()
  t.equal(slack.posts().length - before, 1, 'one reply for three deliveries')
  const rows = (await eventRows(h)).filter(r => r.event_id === ev.event_id)
  t.equal(rows.length, 1)
  t.equal(rows[0]?.status, 'processed')
  t.notOk('token' in (rows[0]?.payload ?? {}), 'the legacy verification token is not kept')
})

await t.test('an admin mentioning the bot with `invite` creates an invitation and gets a reply in the thread', async t => {
  const m = mention('U0ADMIN1', 'invite <mailto:New.Person@Example.com|New.Person@Example.com> admin')
  const res = await sendEvent(h, envelope(m))
  t.equal(res.statusCode, 200)
  assertContract(t, 'POST', EVENTS, res)
  await idle()
  t.same(
    await invitationsOf(h, admin.workspaceId),
    [{ email: 'new.person@example.com', role: 'admin', invited_by: admin.userId }]
  )
  const list = await h.inject({ method: 'GET', url: '/api/invitations', headers: { cookie: admin.cookie } })
  t.equal(list.statusCode, 200)
  assertContract(t, 'GET', '/api/invitations', list)
  t.match(list.json().items, [{ email: 'new.person@example.com', role: 'admin', status: 'pending' }])
  const reply = slack.posts().at(-1)
  t.match(reply, { channel: 'C0CHAN01', thread_ts: m.ts })
  t.match(reply?.text, /Invited new\.person@example\.com as admin/)
  t.notMatch(reply?.text, /signup|token=/, 'the signup link (a credential) is not posted in the channel')
  const lookup = slack.calls('users.info').at(-1)
  t.equal(new URLSearchParams(lookup?.body).get('user'), 'U0ADMIN1', "the speaker's e-mail was looked up")
  const audit = await h.db.query<{ actor_type: string }>(
    "SELECT actor_type FROM audit_events WHERE action = 'invitation.created'"
  )
  t.same(audit.rows, [{ actor_type: 'chat_platform' }], 'audited as done through the chat platform')

  await t.test('a direct message works too; the default role is member', async t => {
    const dm = {
      type: 'message',
      channel_type: 'im',
      channel: 'D0DM0001',
      user: 'U0ADMIN1',
      text: 'invite dm.person@example.com',
      ts: '1700000001.000001'
    }
    t.equal((await sendEvent(h, envelope(dm))).statusCode, 200)
    await idle()
    t.match(
      await invitationsOf(h, admin.workspaceId),
      [{ email: 'dm.person@example.com', role: 'member' }, { email: 'new.person@example.com' }]
    )
    t.match(slack.posts().at(-1), { channel: 'D0DM0001', text: /Invited dm\.person@example\.com as member/ })
  })

  await t.test("the bot's own messages and edits are not commands", async t => {
    const before = slack.posts().length
    const own = {
      type: 'message',
      channel_type: 'im',
      channel: 'D0DM0001',
      user: BOT_USER_ID,
      bot_id: 'B0BOT001',
      text: 'invite x@example.com',
      ts: '1700000001.000002'
    }
    const edit = {
      type: 'message',
      subtype: 'message_changed',
      channel_type: 'im',
      channel: 'D0DM0001',
      user: 'U0ADMIN1',
      text: 'invite y@example.com',
      ts: '1700000001.000003'
    }
    for (const ev of [own, edit]) t.equal((await sendEvent(h, envelope(ev))).statusCode, 200)
    await idle()
    t.equal(slack.posts().length, before, 'no reply')
    t.equal((await invitationsOf(h, admin.workspaceId)).length, 2, 'no invitation')
  })

  await t.test('an error from the invitations service is told in the thread', async t => {
    const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
    t.equal((await sendEvent(h, envelope(mention('U0ADMIN1', `invite ${member.email}`)))).statusCode, 200)
    await idle()
    t.match(slack.posts().at(-1)?.text, /Could not invite .*: A user with this e-mail already exists/)
  })
})

await t.test('anyone but an active admin of the workspace gets a refusal and nothing is created', async t => {
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  const otherAdmin = await h.signIn({ role: 'admin' }) // an admin, but of another workspace
  slack.emails.set('U0MEMBER', member.email)
  slack.emails.set('U0OTHER1', otherAdmin.email)
  slack.emails.set('U0STRANGE', 'stranger@elsewhere.example')
  const before = await invitationsOf(h, admin.workspaceId)
  for (const user of ['U0MEMBER', 'U0OTHER1', 'U0STRANGE', 'U0NOEMAIL']) {
    const postsBefore = slack.posts().length
    t.equal((await sendEvent(h, envelope(mention(user, 'invite sneaky@example.com admin')))).statusCode, 200)
    await idle()
    const posts = slack.posts().slice(postsBefore)
    t.equal(posts.length, 1, `${user}: one reply`)
    t.match(posts[0]?.text, /only admins/, `${user}: a polite refusal`)
  }
  t.same(await invitationsOf(h, admin.workspaceId), before, 'no invitation created')
  t.same(await invitationsOf(h, otherAdmin.workspaceId), [], 'nor in the other workspace')
})

await t.test('the bot token never appears in plaintext in the database', async t => {
  for (const table of ['chat_installations', 'chat_events', 'audit_events', 'oauth_states']) {
    const rows = (await h.db.query(`SELECT * FROM ${table}`)).rows
    t.ok(rows.length > 0, `${table} has rows`)
    t.notOk(JSON.stringify(rows).includes(slack.botToken), `${table}: no plaintext token`)
  }
})

await t.test('app_uninstalled and tokens_revoked deactivate the installation', async t => {
  const before = slack.posts().length
  t.equal((await sendEvent(h, envelope({ type: 'app_uninstalled' }))).statusCode, 200)
  await idle()
  const active = async () => (await h.db.query<{ active: boolean }>(
    'SELECT active FROM chat_installations WHERE team_id = $1', [TEAM_ID]
  )).rows[0]?.active
  t.equal(await active(), false)
  const audit = await h.db.query<{ actor_type: string, workspace_id: string }>(
    "SELECT actor_type, workspace_id FROM audit_events WHERE action = 'chat.uninstalled'"
  )
  t.same(audit.rows, [{ actor_type: 'chat_platform', workspace_id: admin.workspaceId }])

  const late = envelope(mention('U0ADMIN1', 'invite after@example.com'))
  t.equal((await sendEvent(h, late)).statusCode, 200, 'still acknowledged')
  await idle()
  t.equal(slack.posts().length, before, 'an uninstalled bot does not act')
  t.equal((await eventRows(h)).find(r => r.event_id === late.event_id)?.status, 'ignored')

  t.equal((await install(h, admin)).statusCode, 302, 'reinstalled')
  t.equal(await active(), true)
  t.equal((await sendEvent(h, envelope({ type: 'tokens_revoked', tokens: { oauth: ['U0ADMIN1'] } }))).statusCode, 200)
  await idle()
  t.equal(await active(), true, 'a user token revoked is not ours')
  t.equal((await sendEvent(h, envelope({ type: 'tokens_revoked', tokens: { bot: [BOT_USER_ID] } }))).statusCode, 200)
  await idle()
  t.equal(await active(), false, 'the bot token revoked deactivates')
})

await t.test('neither the bot token nor the secrets appear in the logs', async t => {
  t.ok(logged.length > 1000, 'the logger captured output at trace level')
  t.match(logged, /slack: app installed/)
  for (const [name, secret] of [
    ['bot token', slack.botToken], ['client secret', CLIENT_SECRET], ['signing secret', SIGNING_SECRET]
  ] as const) {
    t.notOk(logged.includes(secret), `no ${name} in the logs`)
  }
})

t.test('invites from chat draw on the workspace\'s hourly e-mail budget', async t => {
  const { h: small, slack: fake } = await buildWithSlack(t, { env: { INVITE_EMAILS_PER_HOUR: '1' } })
  const owner = await small.signIn({ role: 'admin' })
  t.equal((await install(small, owner)).statusCode, 302)
  fake.emails.set('U0ADMIN1', owner.email)
  const say = async (text: string) => {
    t.equal((await sendEvent(small, envelope(mention('U0ADMIN1', text)))).statusCode, 200)
    await small.app.services.slack.whenIdle()
    return fake.posts().at(-1)?.text ?? ''
  }
  t.match(await say('invite first@example.com'), /Invited first@example\.com/)
  t.match(
    await say('invite second@example.com'), /Could not invite second@example\.com: Too many requests/,
    'the second e-mail of the hour is refused'
  )
  t.same(
    (await invitationsOf(small, owner.workspaceId)).map(r => r.email), ['first@example.com'],
    'nothing written for the refused one'
  )
})

t.test('a restart picks up what was recorded; closing waits for the event in progress', async t => {
  const db = await testDatabase(t)
  const fake = await startSlackFake(t)
  const env = slackEnv(fake.fake)
  const first = await build(t, { db, env })
  const owner = await first.signIn({ role: 'admin' })
  t.equal((await install(first, owner)).statusCode, 302)
  await first.app.close()
  // As if the process died after recording (and acknowledging) the event.
  await insertChatEvent(
    db,
    {
      eventId: 'EvRECOVER1',
      teamId: TEAM_ID,
      type: 'app_mention',
      payload: envelope(mention('U0SOMEONE', 'hi')),
      now: first.clock.now()
    }
  )
  // And one another live instance has just claimed: its lease keeps this instance off it.
  await insertChatEvent(
    db,
    {
      eventId: 'EvCLAIMED1',
      teamId: TEAM_ID,
      type: 'app_mention',
      payload: envelope(mention('U0SOMEONE', 'hi')),
      now: first.clock.now()
    }
  )
  await db.query("UPDATE chat_events SET processed_at = $1 WHERE event_id = 'EvCLAIMED1'", [first.clock.now()])
  const second = await build(t, { db, env })
  await second.app.services.slack.whenIdle()
  t.equal(fake.posts().length, 1, 'the reply was sent after the restart, once')
  const status = async (eventId: unknown) => (await db.query<{ status: string }>(
    'SELECT status FROM chat_events WHERE event_id = $1', [eventId]
  )).rows[0]?.status
  t.equal(await status('EvRECOVER1'), 'processed')
  t.equal(await status('EvCLAIMED1'), 'received', 'left to the instance holding it')

  fake.postDelayMs = 700
  const ev = envelope(mention('U0SOMEONE', 'hi'))
  t.equal((await sendEvent(second, ev)).statusCode, 200)
  await second.app.close()
  t.equal(fake.posts().length, 2, 'the reply was sent')
  t.equal(await status(ev.event_id), 'processed', 'finished, not left half-done')
})
