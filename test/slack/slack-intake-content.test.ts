import t from 'tap'
import { Writable } from 'node:stream'
import type { LightMyRequestResponse } from 'fastify'
import { assertContract } from '../helpers/contract.js'
import { SIGNING_SECRET, TEAM_ID, buildWithSlack, envelope, install, mention, sendEvent } from '../helpers/slack.js'
import { slackSignature } from '../../src/slack/signature.js'

// Chat intake and hostile content: a correctly signed event, slash command or interaction whose
// strings PostgreSQL's jsonb refuses (\u0000, lone surrogates) is stored in a form that round-trips
// and processed; one nested beyond any real payload is refused with a 400 and a log line. Never a
// 500, and a retry by Slack answers the same. Runs on PGlite, and on PostgreSQL with TEST_DATABASE_URL.

let logged = ''
const stream = new Writable({ write (chunk, _enc, cb) { logged += String(chunk); cb() } })
const { h, slack } = await buildWithSlack(t, { logger: { level: 'info', stream } })
const admin = await h.signIn({ role: 'admin' })
t.equal((await install(h, admin)).statusCode, 302, 'installed')
slack.emails.set('U0ADMIN1', admin.email)
const idle = async () => { await h.app.services.slack.whenIdle() }

/** The stored envelope of one event, read back as the worker reads it. */
async function stored (eventId: string): Promise<{ status: string, envelope: unknown } | undefined> {
  const row = (await h.db.query<{ status: string, payload: unknown, payload_text: string | null }>(
    'SELECT status, payload, payload_text FROM chat_events WHERE event_id = $1', [eventId]
  )).rows[0]
  if (row === undefined) return undefined
  return { status: row.status, envelope: row.payload_text !== null ? JSON.parse(row.payload_text) : row.payload }
}

async function signedForm (url: string, fields: Record<string, string>): Promise<LightMyRequestResponse> {
  const payload = new URLSearchParams(fields).toString()
  const ts = String(Math.floor(h.clock.now().getTime() / 1000))
  return await h.inject({
    method: 'POST',
    url,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': ts,
      'x-slack-signature': slackSignature(SIGNING_SECRET, ts, payload)
    },
    payload
  })
}

const hostile: Array<[string, string]> = [
  ['a NUL character', 'help \u0000 me'],
  ['a lone high surrogate', 'help \ud800 me'],
  ['a lone low surrogate', 'help \udc00 me'],
  ['a NUL in a key too', 'help']
]

for (const [name, text] of hostile) {
  await t.test(`an event with ${name}: 200, stored so that it round-trips, processed; the retry is a duplicate`, async t => {
    const event = mention('U0ADMIN1', text)
    if (name.includes('key')) event['odd\u0000key'] = 'x\u0000y'
    const env = envelope(event)
    const before = slack.posts().length
    const res = await sendEvent(h, env)
    t.equal(res.statusCode, 200, 'acknowledged')
    assertContract(t, 'POST', '/api/slack/events', res)
    const retry = await sendEvent(h, env, { headers: { 'x-slack-retry-num': '1' } })
    t.equal(retry.statusCode, 200, "Slack's retry: acknowledged as a duplicate")
    await idle()
    const { token: _token, ...kept } = env
    const row = await stored(String(env.event_id))
    t.equal(row?.status, 'processed', 'processed once')
    t.same(row?.envelope, kept, 'what is stored round-trips to what Slack sent (less the legacy token)')
    t.equal(slack.posts().length, before + 1, 'the bot answered once')
  })
}

await t.test('a slash command and an interaction with NUL and lone surrogates: acknowledged and stored', async t => {
  const cmd = await signedForm('/api/slack/commands', {
    team_id: TEAM_ID,
    user_id: 'U0ADMIN1',
    user_name: 'some\u0000one\ud800',
    command: '/invite',
    text: 'nul@example.com',
    response_url: slack.responseUrl(),
    trigger_id: '1111.2222.nul'
  })
  t.equal(cmd.statusCode, 200, 'command acknowledged')
  assertContract(t, 'POST', '/api/slack/commands', cmd)
  const click = {
    type: 'block_actions',
    user: { id: 'U0ADMIN1', name: 'some\u0000one\udfff' },
    team: { id: TEAM_ID },
    trigger_id: '1111.2222.click',
    response_url: slack.responseUrl(),
    container: { type: 'message', message_ts: '1700000000.000001', channel_id: 'C0CHAN01' },
    actions: [{ action_id: 'nothing_we_know', value: '\u0000', action_ts: '1700000100.000009' }]
  }
  const res = await signedForm('/api/slack/interactions', { payload: JSON.stringify(click) })
  t.equal(res.statusCode, 200, 'interaction acknowledged')
  assertContract(t, 'POST', '/api/slack/interactions', res)
  await idle()
  const rows = (await h.db.query<{ event_id: string, status: string }>(
    "SELECT event_id, status FROM chat_events WHERE event_id LIKE 'command:%' OR event_id LIKE 'interaction:%'"
  )).rows
  t.equal(rows.length, 2, 'both recorded')
  t.ok(rows.every(r => r.status !== 'received'), 'and processed')
  t.ok(
    rows.some(r => r.event_id.startsWith('command:')) && (await stored(rows.find(r => r.event_id.startsWith('command:'))?.event_id ?? ''))
      ?.envelope !== undefined,
    'the command reads back'
  )
})

await t.test('nested beyond any real payload: 400 with a log line, never 500, on every door', async t => {
  // Built as text: JSON.stringify itself overflows the stack on such values.
  const deep = '['.repeat(5000) + ']'.repeat(5000)
  logged = ''
  const env = envelope({ ...mention('U0ADMIN1', 'help'), blocks: 'DEEP' })
  const raw = JSON.stringify(env).replace('"DEEP"', deep)
  for (const attempt of ['first', "Slack's retry"]) {
    const res = await sendEvent(h, null, { raw, ...(attempt === 'first' ? {} : { headers: { 'x-slack-retry-num': '1' } }) })
    t.equal(res.statusCode, 400, `event, ${attempt}: 400`)
    assertContract(t, 'POST', '/api/slack/events', res)
  }
  const click = JSON.stringify({
    type: 'block_actions', user: { id: 'U0ADMIN1' }, team: { id: TEAM_ID }, trigger_id: '1111.2222.deep', actions: 'DEEP'
  }).replace('"DEEP"', deep)
  const res = await signedForm('/api/slack/interactions', { payload: click })
  t.equal(res.statusCode, 400, 'interaction: 400')
  assertContract(t, 'POST', '/api/slack/interactions', res)
  await idle()
  t.equal((await stored(String(env.event_id))), undefined, 'not stored')
  t.match(logged, /slack: payload nested too deeply/, 'a log line says why')
  t.notMatch(logged, /"level":50/, 'no error logged')
})
