import t from 'tap'
import { build } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import {
  APP_URL, buildWithSlack, CLIENT_SECRET, install, sendEvent, setCookie, startInstall, TEAM_ID, BOT_USER_ID
} from '../helpers/slack.js'
import { decryptSecret } from '../../src/lib/crypto.js'
import { botTokenContext } from '../../src/slack/service.js'
import { hashToken } from '../../src/lib/tokens.js'
import type { TestApp } from '../helpers/build.js'

// The Slack app install (OAuth v2): state bound to the browser and the admin, single use,
// code exchange against a loopback fake of Slack, bot token encrypted at rest.

const CALLBACK = '/api/oauth/slack/callback'

// One app for the configured cases (building one costs seconds); each case counts what it adds.
const { h, slack } = await buildWithSlack(t)

async function installations (h: TestApp) {
  return (await h.db.query<Record<string, unknown>>('SELECT * FROM chat_installations ORDER BY created_at')).rows
}

await t.test('a full install stores the installation with the token encrypted and redirects to the app', async t => {
  const admin = await h.signIn({ role: 'admin' })

  const s = await startInstall(h, admin)
  t.equal(s.res.statusCode, 302)
  assertContract(t, 'GET', '/api/oauth/slack/install', s.res)
  t.equal(`${s.location.origin}${s.location.pathname}`, `${slack.fake.url}/oauth/v2/authorize`)
  t.equal(s.location.searchParams.get('client_id'), '1111.2222')
  t.equal(s.location.searchParams.get('scope'), h.config.slack?.scopes.join(','))
  t.equal(s.location.searchParams.get('redirect_uri'), `${h.config.publicUrl}/api/oauth/slack/callback`)
  t.ok(s.state.length >= 43, 'state carries at least 256 bits')
  const cookie = setCookie(s.res, 'slack_oauth_state') ?? ''
  t.match(cookie, /HttpOnly/i)
  t.match(cookie, /Max-Age=600/)
  t.match(cookie, /Path=\/api\/oauth\/slack/)
  t.match(cookie, /SameSite=Lax/i)
  const stored = (await h.db.query<{ state_hash: string, kind: string, workspace_id: string, user_id: string }>(
    'SELECT * FROM oauth_states'
  )).rows
  t.same(
    stored.map(r => [r.state_hash, r.kind, r.workspace_id, r.user_id]),
    [[hashToken(s.state), 'slack', admin.workspaceId, admin.userId]], 'only the hash is kept, bound to the admin'
  )

  const res = await h.inject({
    method: 'GET',
    url: `${CALLBACK}?code=good-code&state=${s.state}`,
    headers: { cookie: s.cookie }
  })
  t.equal(res.statusCode, 302, res.body)
  t.equal(res.headers.location, APP_URL)
  assertContract(t, 'GET', CALLBACK, res)
  t.match(setCookie(res, 'slack_oauth_state'), /Expires=Thu, 01 Jan 1970|Max-Age=0/, 'the state cookie is cleared')

  const exchange = slack.calls('oauth.v2.access')
  t.equal(exchange.length, 1)
  const form = new URLSearchParams(exchange[0]?.body)
  t.same(
    Object.fromEntries(form),
    {
      client_id: '1111.2222',
      client_secret: CLIENT_SECRET,
      code: 'good-code',
      redirect_uri: `${h.config.publicUrl}/api/oauth/slack/callback`
    }
  )
  t.match(String(exchange[0]?.headers['content-type']), /application\/x-www-form-urlencoded/)

  const rows = await installations(h)
  t.equal(rows.length, 1)
  const row = rows[0] as Record<string, unknown>
  t.match(
    row,
    {
      workspace_id: admin.workspaceId,
      platform: 'slack',
      team_id: TEAM_ID,
      team_name: 'Acme on Slack',
      bot_user_id: BOT_USER_ID,
      app_id: 'A0APP001',
      installed_by: admin.userId,
      active: true
    }
  )
  t.match(row.scopes, /chat:write/)
  const enc = String(row.bot_token_enc)
  t.notOk(enc.includes(slack.botToken), 'no plaintext token')
  t.equal(
    decryptSecret(h.config.encryptionKey as Buffer, enc, botTokenContext(TEAM_ID)), slack.botToken,
    'decrypts with the key'
  )
  t.throws(() => decryptSecret(h.config.encryptionKey as Buffer, enc, botTokenContext('T0OTHER')), 'bound to its team')

  const audit = (await h.db.query<{
    action: string,
    actor_id: string,
    target_id: string,
    payload: Record<string, unknown>
  }>(
    "SELECT * FROM audit_events WHERE action = 'chat.installed'")).rows
  t.equal(audit.length, 1)
  t.match(audit[0], { actor_id: admin.userId, target_id: row.id, payload: { teamId: TEAM_ID, reinstall: false } })
  t.notOk(JSON.stringify(audit).includes(slack.botToken))

  await t.test('a reinstall updates the same row in place with the new token', async t => {
    slack.botToken = 'xoxb-the-second-token-0000'
    const again = await install(h, admin)
    t.equal(again.statusCode, 302)
    const after = await installations(h)
    t.equal(after.length, 1)
    t.equal(after[0]?.id, row.id)
    t.equal(
      decryptSecret(h.config.encryptionKey as Buffer, String(after[0]?.bot_token_enc), botTokenContext(TEAM_ID)),
      'xoxb-the-second-token-0000'
    )
    t.not(after[0]?.bot_token_enc, enc, 'a new ciphertext')
    const n = await h.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM audit_events WHERE action = 'chat.installed' AND payload->>'reinstall' = 'true'"
    )
    t.equal(n.rows[0]?.n, 1)
  })
})

await t.test('install needs an admin session: none → /login, a member → 403', async t => {
  const statesBefore = (await h.db.query('SELECT 1 FROM oauth_states')).rows.length
  const anon = await h.inject({ method: 'GET', url: '/api/oauth/slack/install' })
  t.equal(anon.statusCode, 302)
  t.equal(anon.headers.location, '/login')
  assertContract(t, 'GET', '/api/oauth/slack/install', anon)
  const member = await h.signIn({ role: 'member' })
  const res = await h.inject({ method: 'GET', url: '/api/oauth/slack/install', headers: { cookie: member.cookie } })
  t.equal(res.statusCode, 403)
  t.equal(res.json().code, 'FORBIDDEN')
  assertContract(t, 'GET', '/api/oauth/slack/install', res)
  t.equal((await h.db.query('SELECT 1 FROM oauth_states')).rows.length, statesBefore, 'no state issued')
})

await t.test('every bad state is refused with 400 OAUTH_STATE_INVALID and installs nothing', async t => {
  // An admin of another workspace: a successful install would move the team there.
  const admin = await h.signIn({ role: 'admin' })
  const exchangesBefore = slack.calls('oauth.v2.access').length
  const installed = async () => (await installations(h)).filter(r => r.workspace_id === admin.workspaceId).length
  const refused = async (name: string, url: string, cookie: string | undefined) => {
    const res = await h.inject({ method: 'GET', url, headers: cookie !== undefined ? { cookie } : {} })
    t.equal(res.statusCode, 400, name)
    t.equal(res.json().code, 'OAUTH_STATE_INVALID', name)
    assertContract(t, 'GET', url, res, `${name}: conforms`)
    return res
  }

  const a = await startInstall(h, admin)
  await refused('no state at all', `${CALLBACK}?code=good-code`, undefined)
  await refused('state in the query, no cookie', `${CALLBACK}?code=good-code&state=${a.state}`, undefined)
  await refused('cookie, no state in the query', `${CALLBACK}?code=good-code`, a.cookie)
  const b = await startInstall(h, admin)
  await refused('cookie of another attempt', `${CALLBACK}?code=good-code&state=${a.state}`, b.cookie)
  await refused(
    'unknown state (cookie and query agree)', `${CALLBACK}?code=good-code&state=not-a-state-we-issued`,
    'slack_oauth_state=not-a-state-we-issued'
  )

  const c = await startInstall(h, admin)
  h.clock.advance(11 * 60_000)
  const stale = await refused('stale (11 minutes)', `${CALLBACK}?code=good-code&state=${c.state}`, c.cookie)
  t.match(stale.json().message, /expired/)
  t.match(setCookie(stale, 'slack_oauth_state'), /Expires=Thu, 01 Jan 1970|Max-Age=0/, 'cleared on failure too')

  const d = await startInstall(h, admin)
  const denied = await refused('access_denied at Slack', `${CALLBACK}?error=access_denied&state=${d.state}`, d.cookie)
  t.match(denied.json().message, /access_denied/)

  t.equal(slack.calls('oauth.v2.access').length, exchangesBefore, 'no code was exchanged')
  t.equal(await installed(), 0)

  const e = await startInstall(h, admin)
  const ok = await h.inject({
    method: 'GET',
    url: `${CALLBACK}?code=good-code&state=${e.state}`,
    headers: { cookie: e.cookie }
  })
  t.equal(ok.statusCode, 302)
  await refused('the same state again (replay)', `${CALLBACK}?code=good-code&state=${e.state}`, e.cookie)
  t.equal(slack.calls('oauth.v2.access').length, exchangesBefore + 1, 'the replay exchanged nothing')
  t.equal(await installed(), 1, 'the team moved to this workspace, once')
  const moved = await h.db.query<{ workspace_id: string }>(
    "SELECT workspace_id FROM audit_events WHERE action = 'chat.uninstalled' AND payload->>'reason' = 'installed_in_another_workspace'"
  )
  t.equal(moved.rows.length, 1, 'the workspace that lost the team has it in its audit trail')
  t.not(moved.rows[0]?.workspace_id, admin.workspaceId)
})

await t.test('Slack failing the code exchange answers 502 UPSTREAM_FAILED and installs nothing', async t => {
  const admin = await h.signIn({ role: 'admin' })
  const rowsBefore = JSON.stringify(await installations(h))
  const attempt = async (name: string, code = 'good-code') => {
    const s = await startInstall(h, admin)
    const url = `${CALLBACK}?code=${code}&state=${s.state}`
    const res = await h.inject({ method: 'GET', url, headers: { cookie: s.cookie } })
    t.equal(res.statusCode, 502, name)
    t.equal(res.json().code, 'UPSTREAM_FAILED', name)
    t.notMatch(res.json().message, /invalid_code|HTTP|fetch/, `${name}: no upstream detail in the message`)
    assertContract(t, 'GET', url, res, `${name}: conforms`)
  }
  await attempt('ok:false from Slack', 'bad-code')
  slack.fake.on('POST /oauth.v2.access', () => ({ status: 500, text: 'upstream broke' }))
  await attempt('HTTP 500')
  slack.fake.on(
    'POST /oauth.v2.access',
    () => ({ json: { ok: true, token_type: 'user', access_token: 'xoxp-user', team: { id: TEAM_ID } } })
  )
  await attempt('no bot token in the answer')
  slack.fake.on('POST /oauth.v2.access', () => ({ hang: true }))
  const started = Date.now()
  await attempt('Slack does not answer (bounded timeout)')
  t.ok(Date.now() - started < 8000, 'bounded by the client timeout')
  t.equal(JSON.stringify(await installations(h)), rowsBefore, 'the installation is untouched')
})

t.test('not configured: 404 CHAT_PLATFORM_NOT_CONFIGURED on all three operations', async t => {
  const h = await build(t)
  const admin = await h.signIn({ role: 'admin' })
  const inst = await h.inject({ method: 'GET', url: '/api/oauth/slack/install', headers: { cookie: admin.cookie } })
  const cb = await h.inject({
    method: 'GET',
    url: `${CALLBACK}?code=x&state=y`,
    headers: { cookie: 'slack_oauth_state=y' }
  })
  const ev = await sendEvent(h, { type: 'url_verification', challenge: 'abc' })
  for (const [url, method, res] of [
    ['/api/oauth/slack/install', 'GET', inst], [CALLBACK, 'GET', cb], ['/api/slack/events', 'POST', ev]
  ] as const) {
    t.equal(res.statusCode, 404, url)
    t.equal(res.json().code, 'CHAT_PLATFORM_NOT_CONFIGURED', url)
    assertContract(t, method, url, res)
  }
  t.equal((await h.db.query('SELECT 1 FROM oauth_states')).rows.length, 0)
})
