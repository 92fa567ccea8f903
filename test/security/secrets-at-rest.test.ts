import t from 'tap'
import { buildWithSlack, install } from '../helpers/slack.js'
import { createApiKey, mcpRequest } from '../helpers/mcp.js'
import { startSmtp } from '../helpers/smtp.js'
import type { TestApp } from '../helpers/build.js'

// Nothing in the database lets its reader sign up or sign in: after a full run of the flows,
// every table and column is dumped as text, and no live secret the flows produced (signup and
// login tokens, the setup link's token, the API key, the session JWT, the Slack bot token, the
// link in an idempotent invite's stored answer, webhook signing secrets) appears in it.

async function dumpDatabase (h: TestApp): Promise<string> {
  const tables = await h.db.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'")
  let out = ''
  for (const { table_name: name } of tables.rows) {
    const rows = await h.db.query<{ dump: string }>(`SELECT row_to_json(x)::text AS dump FROM "${name}" x`)
    out += `${name}\n${rows.rows.map(r => r.dump).join('\n')}\n`
  }
  return out
}

const tokenOf = (link: string): string => new URL(link).searchParams.get('token') ?? ''
const linkIn = (text: string): string => /https?:\/\/\S+token=[^\s"<>]+/.exec(text)?.[0] ?? ''

t.test('after every flow, the database holds no live secret', async t => {
  const smtp = await startSmtp(t)
  const { h, slack } = await buildWithSlack(t, { env: { SMTP_URL: smtp.url } })
  const secrets: Array<[string, string]> = []
  // A setup link, issued while the installation is empty (kept until a start finds a workspace).
  secrets.push(['setup link token', tokenOf(await h.app.services.setup.issueLink() ?? '')])
  const admin = await h.signIn()
  const post = async (url: string, payload: unknown, headers: Record<string, string> = {}) =>
    await h.inject({
      method: 'POST',
      url,
      headers: { cookie: admin.cookie, 'content-type': 'application/json', ...headers },
      payload: JSON.stringify(payload)
    })

  // Invite (fallback path), resend, and signup with the resent link.
  const inv = await post('/api/users/invite', { email: 'rest@example.com', role: 'member' })
  t.equal(inv.statusCode, 200)
  secrets.push(['invite link token', tokenOf(inv.json().invitationUrl)])
  const list = await h.inject({ method: 'GET', url: '/api/invitations', headers: { cookie: admin.cookie } })
  const resent = await h.inject({
    method: 'POST',
    url: `/api/invitations/${list.json().items[0].id as string}/resend`,
    headers: { cookie: admin.cookie }
  })
  t.equal(resent.statusCode, 200)
  secrets.push(['resent link token', tokenOf(resent.json().invitationUrl)])

  // An idempotent invite: its stored answer carries a live link until it is used.
  const idem = await post(
    '/api/users/invite', { email: 'idem@example.com', role: 'member' }, { 'idempotency-key': 'k-at-rest' }
  )
  t.equal(idem.statusCode, 200)
  secrets.push(['idempotent answer token', tokenOf(idem.json().invitationUrl)])

  const signup = await h.inject({
    method: 'POST',
    url: '/api/auth/signup',
    payload: { token: tokenOf(resent.json().invitationUrl), name: 'Rest' }
  })
  t.equal(signup.statusCode, 201)
  const jwt = String(
    [signup.headers['set-cookie']].flat().find(c => String(c).startsWith('service_session=')) ?? ''
  ).split(';')[0]?.split('=')[1] ?? ''
  t.ok(jwt.length > 20, 'a session JWT')
  secrets.push(['session JWT (signup)', jwt])

  // Login link, not yet used (live), and one used to sign in.
  const seen = smtp.messages.length
  t.equal((await post('/api/auth/login-link', { email: 'rest@example.com' })).statusCode, 202)
  const loginToken = tokenOf(linkIn((await smtp.nextMessage(seen)).text))
  t.ok(loginToken.length > 20, 'a login token')
  const seen2 = smtp.messages.length
  await post('/api/auth/login-link', { email: 'rest@example.com' })
  const liveLoginToken = tokenOf(linkIn((await smtp.nextMessage(seen2)).text))
  secrets.push(['unused login token', liveLoginToken])
  const verify = await h.inject({ method: 'POST', url: '/api/auth/verify', payload: { token: loginToken } })
  t.equal(verify.statusCode, 200)
  const jwt2 = String(
    [verify.headers['set-cookie']].flat().find(c => String(c).startsWith('service_session=')) ?? ''
  ).split(';')[0]?.split('=')[1] ?? ''
  secrets.push(['session JWT (login link)', jwt2])
  t.equal(
    (await h.inject({
      method: 'GET',
      url: '/api/users/me',
      headers: { cookie: `service_session=${jwt2}` }
    })).statusCode,
    200, 'the session works'
  )

  // An API key, created and used.
  const key = await createApiKey(h, admin)
  secrets.push(['API key', key.secret])
  t.equal((await mcpRequest(h, key.secret)).statusCode, 200, 'the key works')

  // Slack install: the bot token.
  const installed = await install(h, admin)
  t.equal(installed.statusCode, 302)
  secrets.push(['Slack bot token', slack.botToken])

  // A webhook endpoint: its signing secret, and the one a rotation makes (the old one still
  // signs for a day, so both are live). Looked for whole and as the key after `whsec_`.
  const hook = await post('/api/webhook-endpoints', { url: 'http://127.0.0.1:9/hook' })
  t.equal(hook.statusCode, 201)
  const rotated = await post(`/api/webhook-endpoints/${hook.json().id as string}/rotate-secret`, undefined)
  t.equal(rotated.statusCode, 200)
  for (const [what, secret] of [['webhook secret', hook.json().secret], ['rotated webhook secret', rotated.json().secret]]) {
    secrets.push([what, secret], [`${what} (key)`, String(secret).slice('whsec_'.length)])
  }

  const dump = await dumpDatabase(h)
  t.ok(dump.includes('idem@example.com'), 'the dump holds the data (sanity)')
  for (const [what, secret] of secrets) {
    t.ok(secret.length >= 20, `${what}: a secret to look for`)
    t.notOk(dump.includes(secret), `${what} is not in the database`)
  }
})
