import t from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { assertContract } from '../helpers/contract.js'
import { assertLimited } from '../helpers/rate-limit.js'
import { createApiKey, mcpRequest } from '../helpers/mcp.js'
import { startSmtp, type CaughtMail } from '../helpers/smtp.js'
import { buildWithSlack, install, slashCommand } from '../helpers/slack.js'
import { SESSION_COOKIE } from '../../src/sessions/service.js'

// Invite links (/api/invite-links) and joining through one (/join/{code}, /api/join/{code},
// /api/join/{code}/confirm): REST, MCP and Slack's `/invite link`, with a real SMTP peer and the
// loopback fake of Slack. One app for the file; each join comes from its own client address
// (remoteAddress), so the shared per-address budget is spent only where a case means to.

const LINKS = '/api/invite-links'
const smtp = await startSmtp(t)
const { h, slack } = await buildWithSlack(t, { env: { SMTP_URL: smtp.url, INVITE_LINK_JOINS_PER_HOUR: '52' } })
const admin = await h.signIn({ role: 'admin', workspaceName: 'Acme Robotics' })
const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
t.equal((await install(h, admin)).statusCode, 302, 'Slack installed')
slack.emails.set('U0ADMIN1', admin.email)
slack.emails.set('U0MEMBER', member.email)

let ip = 0
/** A fresh client address per call, unless one is given. */
const nextIp = () => `10.1.${Math.floor(++ip / 250)}.${(ip % 250) + 1}`
const json = { 'content-type': 'application/json' }

async function createLink (
  body: Record<string, unknown> = {}
): Promise<{ id: string, code: string, res: LightMyRequestResponse }> {
  const res = await h.inject({ method: 'POST', url: LINKS, headers: { cookie: admin.cookie, ...json }, payload: body })
  if (res.statusCode !== 201) throw new Error(`create: ${res.statusCode} ${res.body}`)
  const url = new URL(res.json().url as string)
  return { id: res.json().id, code: url.pathname.split('/').pop() as string, res }
}

async function ask (code: string, email: string, o: { name?: string, ip?: string } = {}) {
  return await h.inject({
    method: 'POST',
    url: `/api/join/${code}`,
    remoteAddress: o.ip ?? nextIp(),
    headers: json,
    payload: { email, ...(o.name !== undefined ? { name: o.name } : {}) }
  })
}

async function confirm (code: string, token: string, ip = nextIp()) {
  return await h.inject({ method: 'POST', url: `/api/join/${code}/confirm`, remoteAddress: ip, headers: json, payload: { token } })
}

/** The confirmation token e-mailed to `to` (the newest one). */
function tokenFor (to: string): string {
  const mail = [...smtp.messages].reverse().find((m: CaughtMail) => m.to.includes(to))
  const m = /\?confirm=([A-Za-z0-9_-]+)/.exec(mail?.text ?? '')
  if (m === null) throw new Error(`no confirmation e-mail to ${to}`)
  return m[1] as string
}

/** Ask, wait for the e-mail, return its token. */
async function askAndRead (code: string, email: string, name?: string): Promise<string> {
  const seen = smtp.messages.length
  const res = await ask(code, email, name !== undefined ? { name } : {})
  if (res.statusCode !== 202) throw new Error(`ask: ${res.statusCode} ${res.body}`)
  await smtp.nextMessage(seen)
  return tokenFor(email.toLowerCase())
}

async function auditActions (targetId: string): Promise<string[]> {
  const r = await h.db.query<{ action: string }>(
    'SELECT action FROM audit_events WHERE target_id = $1 ORDER BY id', [targetId])
  return r.rows.map(x => x.action)
}

t.test('create, list, revoke, regenerate: the URL shown once, only a hash at rest, audited', async t => {
  const { id, code, res } = await createLink({ maxUses: 10, expiresInHours: 720, allowedDomains: ['Acme.com'] })
  assertContract(t, 'POST', LINKS, res)
  t.equal(res.headers['cache-control'], 'no-store')
  t.match(res.json(), {
    role: 'member',
    status: 'active',
    maxUses: 10,
    uses: 0,
    allowedDomains: ['acme.com'],
    requiresApproval: false,
    createdBy: admin.userId,
    revokedAt: null
  })
  t.equal(res.json().url, `${h.config.publicUrl}/join/${code}`)
  t.ok(Buffer.from(code, 'base64url').length >= 16, 'the code carries at least 128 bits')
  const hours = (Date.parse(res.json().expiresAt) - h.clock.now().getTime()) / 3_600_000
  t.equal(hours, 720)
  const stored = await h.db.query<Record<string, unknown>>('SELECT * FROM invite_links WHERE id = $1', [id])
  t.notOk(JSON.stringify(stored.rows[0]).includes(code), 'the code itself is nowhere in the row')

  h.clock.advance(1)
  const defaults = await createLink()
  t.match(defaults.res.json(), { maxUses: null, allowedDomains: [], requiresApproval: false })
  t.equal((Date.parse(defaults.res.json().expiresAt) - h.clock.now().getTime()) / 86_400_000, 7, 'default: 7 days')

  for (const [body, field] of [
    [{ role: 'admin' }, 'role'], [{ expiresInHours: 0 }, 'expiresInHours'], [{ expiresInHours: 2161 }, 'expiresInHours'],
    [{ maxUses: 0 }, 'maxUses'], [{ allowedDomains: ['not a domain'] }, 'allowedDomains.0']
  ] as const) {
    const bad = await h.inject({ method: 'POST', url: LINKS, headers: { cookie: admin.cookie, ...json }, payload: body })
    t.equal(bad.statusCode, 400, `refused: ${JSON.stringify(body)}`)
    t.equal(bad.json().details.errors[0].field, field)
    assertContract(t, 'POST', LINKS, bad)
  }
  const byMember = await h.inject({ method: 'POST', url: LINKS, headers: { cookie: member.cookie, ...json }, payload: {} })
  t.equal(byMember.statusCode, 403, 'members may not create links')

  const list = await h.inject({ url: `${LINKS}?limit=1`, headers: { cookie: admin.cookie } })
  t.equal(list.statusCode, 200)
  assertContract(t, 'GET', `${LINKS}?limit=1`, list)
  t.equal(list.json().items.length, 1)
  t.notOk('url' in list.json().items[0], 'a list never shows the URL')
  const next = await h.inject({ url: `${LINKS}?limit=1&cursor=${list.json().nextCursor as string}`, headers: { cookie: admin.cookie } })
  t.same([...list.json().items, ...next.json().items].map((l: { id: string }) => l.id).slice(0, 2), [defaults.id, id], 'newest first, paged')

  const regen = await h.inject({ method: 'POST', url: `${LINKS}/${id}/regenerate`, headers: { cookie: admin.cookie } })
  t.equal(regen.statusCode, 200)
  assertContract(t, 'POST', `${LINKS}/${id}/regenerate`, regen)
  const newCode = new URL(regen.json().url as string).pathname.split('/').pop() as string
  t.not(newCode, code)
  t.equal((await h.inject({ url: `/join/${code}` })).statusCode, 404, 'the old code is dead at once')
  t.equal((await h.inject({ url: `/join/${newCode}` })).statusCode, 200, 'the new one works')

  const revoked = await h.inject({ method: 'DELETE', url: `${LINKS}/${id}`, headers: { cookie: admin.cookie } })
  t.equal(revoked.statusCode, 200)
  assertContract(t, 'DELETE', `${LINKS}/${id}`, revoked)
  t.equal(revoked.json().status, 'revoked')
  const again = await h.inject({ method: 'DELETE', url: `${LINKS}/${id}`, headers: { cookie: admin.cookie } })
  t.equal(again.statusCode, 404, 'revoked already: not found')
  assertContract(t, 'DELETE', `${LINKS}/${id}`, again)
  const regenRevoked = await h.inject({ method: 'POST', url: `${LINKS}/${id}/regenerate`, headers: { cookie: admin.cookie } })
  t.equal(regenRevoked.statusCode, 404, 'a revoked link is not regenerated')
  t.equal((await h.inject({ url: `/join/${newCode}` })).statusCode, 404, 'a revoked link\'s page says so')

  t.same(await auditActions(id), ['invite_link.created', 'invite_link.regenerated', 'invite_link.revoked'])
  const events = await h.db.query<{ event_type: string, payload: Record<string, unknown> }>(
    'SELECT event_type, payload FROM audit_events WHERE target_id = $1 ORDER BY id', [id])
  t.same(events.rows.map(e => e.event_type), ['invite_link.created', 'invite_link.regenerated', 'invite_link.revoked'])
  t.notOk(JSON.stringify(events.rows).includes(code), 'no event carries a code')
})

t.test('joining: the page and the e-mailed link change nothing until the person confirms', async t => {
  const { id, code } = await createLink({ maxUses: 5 })
  const page = await h.inject({ url: `/join/${code}` })
  t.equal(page.statusCode, 200)
  assertContract(t, 'GET', `/join/${code}`, page)
  t.match(page.body, /Join Acme Robotics/)
  t.notOk(page.body.includes(admin.email), 'the page names the workspace, nothing else about it')
  t.match(String(page.headers['content-security-policy']), /script-src 'nonce-/)

  const seen = smtp.messages.length
  const asked = await ask(code, 'Grace@Example.org', { name: 'Grace Hopper' })
  t.equal(asked.statusCode, 202)
  assertContract(t, 'POST', `/api/join/${code}`, asked)
  const mail = await smtp.nextMessage(seen)
  t.same(mail.to, ['grace@example.org'])
  t.match(mail.subject, 'Confirm your address to join Acme Robotics')
  const token = tokenFor('grace@example.org')

  // A scanner opens the e-mailed link: nothing happens.
  const opened = await h.inject({ url: `/join/${code}?confirm=${token}` })
  t.equal(opened.statusCode, 200)
  t.match(opened.body, /<form id="confirm" hidden>/)
  const unused = await h.db.query('SELECT uses FROM invite_links WHERE id = $1', [id])
  t.equal((unused.rows[0] as { uses: number }).uses, 0, 'opening pages used nothing')
  t.equal((await h.db.query("SELECT 1 FROM users WHERE email = 'grace@example.org'")).rows.length, 0)

  // The page's preview: the address the confirmation proves, and whether this browser asked.
  const preview = async (tok: string, cookie?: string) => await h.inject({
    method: 'POST',
    url: `/api/join/${code}/confirm/preview`,
    remoteAddress: nextIp(),
    headers: { ...json, ...(cookie !== undefined ? { cookie } : {}) },
    payload: { token: tok }
  })
  const bound = asked.cookies.find(c => c.name === 'login_link_browser')
  t.match(bound, { httpOnly: true, sameSite: 'Strict', path: '/api' }, 'the asking browser is bound by an HttpOnly cookie')
  const here = await preview(token, `login_link_browser=${bound?.value ?? ''}`)
  t.equal(here.statusCode, 200)
  assertContract(t, 'POST', `/api/join/${code}/confirm/preview`, here)
  t.match(here.json(), {
    email: 'grace@example.org', workspace: { name: 'Acme Robotics' }, requiresApproval: false, sameBrowser: true
  })
  t.match((await preview(token)).json(), { sameBrowser: false }, 'another browser (no cookie): false')
  t.match((await preview(token, `login_link_browser=${'A'.repeat(43)}`)).json(), { sameBrowser: false }, 'another secret: false')
  const unknownToken = await preview('not-the-token')
  t.equal(unknownToken.statusCode, 400)
  t.equal(unknownToken.json().code, 'TOKEN_INVALID')
  assertContract(t, 'POST', `/api/join/${code}/confirm/preview`, unknownToken)
  const previewed = await h.db.query('SELECT uses FROM invite_links WHERE id = $1', [id])
  t.equal((previewed.rows[0] as { uses: number }).uses, 0, 'previews used nothing')

  const bad = await confirm(code, 'not-the-token')
  t.equal(bad.statusCode, 400)
  t.equal(bad.json().code, 'TOKEN_INVALID')
  assertContract(t, 'POST', `/api/join/${code}/confirm`, bad)

  const joined = await confirm(code, token)
  t.equal(joined.statusCode, 201)
  assertContract(t, 'POST', `/api/join/${code}/confirm`, joined)
  t.match(joined.json(), { user: { email: 'grace@example.org', name: 'Grace Hopper', role: 'member' }, workspace: { name: 'Acme Robotics' } })
  const cookie = String([joined.headers['set-cookie']].flat()[0]).split(';')[0] as string
  t.ok(cookie.startsWith(`${SESSION_COOKIE}=`), 'signed in')
  const me = await h.inject({ url: '/api/users/me', headers: { cookie } })
  t.equal(me.statusCode, 200, 'the session works')
  const userId = joined.json().user.id as string
  const joinedEvent = await h.db.query<{ event_type: string, payload: Record<string, unknown>, source: string }>(
    "SELECT event_type, payload, source FROM audit_events WHERE action = 'member.joined' AND target_id = $1", [userId])
  t.match(joinedEvent.rows[0], { event_type: 'member.joined', source: 'web', payload: { inviteLinkId: id, role: 'member' } })
  const feed = await h.inject({ url: '/api/events', headers: { cookie: admin.cookie } })
  const fromFeed = (feed.json().items as Array<{ type: string, data: Record<string, unknown> }>)
    .find(e => e.type === 'member.joined' && e.data.userId === userId)
  t.match(fromFeed?.data, { inviteLinkId: id, email: 'grace@example.org' }, 'the event names the link (its door)')

  const twice = await confirm(code, token)
  t.equal(twice.statusCode, 410)
  t.equal(twice.json().code, 'TOKEN_USED')
  const usedPreview = await preview(token)
  t.equal(usedPreview.statusCode, 410, 'a used confirmation previews as used')
  t.equal(usedPreview.json().code, 'TOKEN_USED')
  assertContract(t, 'POST', `/api/join/${code}/confirm/preview`, usedPreview)

  // An address that is already someone's: the same 202, refused once proven.
  t.equal((await ask(code, member.email)).statusCode, 202, 'no enumeration when asking')
  const taken = await confirm(code, tokenFor(member.email))
  t.equal(taken.statusCode, 409)
  t.equal(taken.json().code, 'USER_EXISTS')
  const uses = await h.db.query<{ uses: number }>('SELECT uses FROM invite_links WHERE id = $1', [id])
  t.equal(uses.rows[0]?.uses, 1, 'only the join counted a use')

  const unknown = await h.inject({ url: '/join/no-such-code' })
  t.equal(unknown.statusCode, 404)
  assertContract(t, 'GET', '/join/no-such-code', unknown)
  t.match(unknown.body, /This invite link is not valid/)
  const asJson = await h.inject({ url: '/join/no-such-code', headers: { accept: 'application/json' } })
  t.same(asJson.json(), { message: 'Invite link not found', code: 'NOT_FOUND' })
  const askUnknown = await ask('no-such-code', 'x@example.org')
  t.equal(askUnknown.statusCode, 404)
  assertContract(t, 'POST', '/api/join/no-such-code', askUnknown)
})

t.test('the domain rule, checked on the address to be proven and on the proven one', async t => {
  const { code, id } = await createLink({ allowedDomains: ['acme.com'] })
  const other = await ask(code, 'eve@evil.example')
  t.equal(other.statusCode, 403)
  t.equal(other.json().code, 'EMAIL_DOMAIN_NOT_ALLOWED')
  assertContract(t, 'POST', `/api/join/${code}`, other)
  const lookalike = await ask(code, 'eve@notacme.com')
  t.equal(lookalike.statusCode, 403, 'a domain is matched whole')
  const token = await askAndRead(code, 'ADA@ACME.COM')
  // The rule changes under a pending confirmation: the proven address is checked again.
  await h.db.query("UPDATE invite_links SET allowed_domains = '{acme.org}' WHERE id = $1", [id])
  const refused = await confirm(code, token)
  t.equal(refused.statusCode, 403)
  t.equal(refused.json().code, 'EMAIL_DOMAIN_NOT_ALLOWED')
  await h.db.query("UPDATE invite_links SET allowed_domains = '{acme.com}' WHERE id = $1", [id])
  t.equal((await confirm(code, token)).statusCode, 201, 'an allowed, proven address joins')
})

t.test('with approval, a proven address becomes an invite request the admins approve', async t => {
  const { code, id } = await createLink({ requiresApproval: true })
  const token = await askAndRead(code, 'lin@example.org')
  const res = await confirm(code, token)
  t.equal(res.statusCode, 202)
  assertContract(t, 'POST', `/api/join/${code}/confirm`, res)
  t.match(res.json().message, /admins of Acme Robotics will decide/)
  t.notOk(res.headers['set-cookie'], 'nobody is signed in')
  const requests = await h.inject({ url: '/api/invite-requests?status=pending', headers: { cookie: admin.cookie } })
  const request = (requests.json().items as Array<{ id: string, email: string, requestedBy: string | null }>)
    .find(r => r.email === 'lin@example.org')
  t.match(request, { requestedBy: null }, 'a pending request, asked by nobody who is a member')
  const created = await h.db.query<{ payload: Record<string, unknown> }>(
    "SELECT payload FROM audit_events WHERE action = 'invite_request.created' AND target_id = $1", [request?.id])
  t.match(created.rows[0]?.payload, { inviteLinkId: id })
  // The admins hear of it in Slack as of any request, the person named by the address they proved.
  await h.app.services.slack.whenIdle()
  const dm = slack.posts().find(p => p.channel === 'U0ADMIN1' && /lin@example\.org/.test(p.text ?? ''))
  t.match(dm?.text, /^lin@example\.org asks to join as member$/, 'the admin is DMed in Slack')
  const buttons = (dm?.blocks ?? []).find(b => b.type === 'actions') as { elements: Array<{ value: string }> } | undefined
  t.equal(buttons?.elements[0]?.value, request?.id, 'with the buttons to decide it')
  const seen = smtp.messages.length
  const approved = await h.inject({
    method: 'POST', url: `/api/invite-requests/${request?.id ?? ''}/approve`, headers: { cookie: admin.cookie }
  })
  t.equal(approved.statusCode, 200, 'approved through the existing flow')
  const invitation = await smtp.nextMessage(seen)
  t.same(invitation.to, ['lin@example.org'], 'the invitation is e-mailed')
  t.equal((await h.db.query("SELECT 1 FROM users WHERE email = 'lin@example.org'")).rows.length, 0, 'not a member yet')
})

t.test('expiry, revocation and regeneration end pending confirmations too', async t => {
  const short = await createLink({ expiresInHours: 1 })
  const token = await askAndRead(short.code, 'late@example.org')
  h.clock.advance(61 * 60_000)
  const page = await h.inject({ url: `/join/${short.code}` })
  t.equal(page.statusCode, 410)
  assertContract(t, 'GET', `/join/${short.code}`, page)
  t.match(page.body, /This invite link has expired/)
  const asked = await ask(short.code, 'later@example.org')
  t.equal(asked.statusCode, 410)
  t.equal(asked.json().code, 'TOKEN_EXPIRED')
  assertContract(t, 'POST', `/api/join/${short.code}`, asked)
  t.equal((await confirm(short.code, token)).json().code, 'TOKEN_EXPIRED', 'a confirmation of an expired link')

  const link = await createLink()
  const pending = await askAndRead(link.code, 'pending@example.org')
  const regen = await h.inject({ method: 'POST', url: `${LINKS}/${link.id}/regenerate`, headers: { cookie: admin.cookie } })
  const newCode = new URL(regen.json().url as string).pathname.split('/').pop() as string
  t.equal((await confirm(link.code, pending)).statusCode, 404, 'through the old code: gone')
  t.equal((await confirm(newCode, pending)).json().code, 'TOKEN_INVALID', 'nor through the new one')
  const fresh = await askAndRead(newCode, 'pending@example.org')
  await h.inject({ method: 'DELETE', url: `${LINKS}/${link.id}`, headers: { cookie: admin.cookie } })
  t.equal((await confirm(newCode, fresh)).statusCode, 404, 'revoked: gone')
})

t.test('50 concurrent confirmations on a link with 3 uses left make exactly 3 members; the link has a budget', async t => {
  const { id, code } = await createLink({ maxUses: 3 })
  const emails = Array.from({ length: 50 }, (_, i) => `crowd${i}@example.org`)
  const seen = smtp.messages.length
  // Asked ten at a time (the e-mails go out within the request, under SMTP_TIMEOUT_MS); confirmed all at once.
  const asked: LightMyRequestResponse[] = []
  for (let i = 0; i < emails.length; i += 10) {
    asked.push(...await Promise.all(emails.slice(i, i + 10).map(async e => await ask(code, e))))
  }
  t.same([...new Set(asked.map(r => r.statusCode))], [202])
  await smtp.nextMessage(seen + 49, 10_000)
  const tokens = emails.map(tokenFor)
  const results = await Promise.all(tokens.map(async tok => await confirm(code, tok)))
  const statuses = results.map(r => r.statusCode)
  t.equal(statuses.filter(s => s === 201).length, 3, 'exactly three joined')
  t.same([...new Set(results.filter(r => r.statusCode !== 201).map(r => r.json().code))], ['TOKEN_USED'])
  const users = await h.db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM users WHERE email LIKE 'crowd%@example.org'")
  t.equal(users.rows[0]?.n, 3)
  const link = await h.db.query<{ uses: number }>('SELECT uses FROM invite_links WHERE id = $1', [id])
  t.equal(link.rows[0]?.uses, 3)
  const page = await h.inject({ url: `/join/${code}` })
  t.equal(page.statusCode, 410, 'a used-up link says so')
  t.match(page.body, /used up/)

  // The per-link budget (INVITE_LINK_JOINS_PER_HOUR=52 here): confirmations e-mailed in the hour.
  const other = await createLink()
  for (let i = 0; i < 52; i += 13) {
    await Promise.all(Array.from({ length: 13 }, async (_, j) => await ask(other.code, `budget${i + j}@example.org`)))
  }
  const over = await ask(other.code, 'one-more@example.org')
  t.equal(over.statusCode, 429, 'the link\'s budget is spent, whatever the address')
  t.equal(over.json().code, 'RATE_LIMITED')
  assertContract(t, 'POST', `/api/join/${other.code}`, over)
  const retry = Number(over.headers['retry-after'])
  t.ok(retry >= 1 && retry <= 3600, `Retry-After within the hour (${retry})`)
  h.clock.advance(3_600_001)
  t.equal((await ask(other.code, 'one-more@example.org')).statusCode, 202, 'an hour later it sends again')
})

t.test('one client address has one budget over the public operations', async t => {
  const { code } = await createLink()
  const from = '10.9.9.9'
  for (let i = 0; i < h.config.rateLimit.authPerMinute; i++) await ask(code, `ip${i}@example.org`, { ip: from })
  assertLimited(t, await ask(code, 'ip-over@example.org', { ip: from }), 'POST', `/api/join/${code}`, h.config.rateLimit.authPerMinute)
  const c = await h.inject({ method: 'POST', url: `/api/join/${code}/confirm`, remoteAddress: from, headers: json, payload: { token: 'x' } })
  t.equal(c.statusCode, 429, 'confirming draws on the same budget')
})

t.test('MCP: create_invite_link, list_invite_links, revoke_invite_link', async t => {
  const key = (await createApiKey(h, admin, 'links')).secret
  const call = async (name: string, args: Record<string, unknown>) => {
    const res = await mcpRequest(h, key, 'tools/call', { name, arguments: args })
    t.equal(res.statusCode, 200)
    type Result = { isError?: boolean, structuredContent: Record<string, unknown>, content: Array<{ text: string }> }
    return res.json().result as Result
  }
  h.clock.advance(1)
  const created = await call('create_invite_link', { maxUses: 2, allowedDomains: ['acme.com'] })
  t.notOk(created.isError)
  t.match(created.structuredContent, { role: 'member', maxUses: 2, allowedDomains: ['acme.com'], status: 'active' })
  t.match(created.structuredContent.url, /\/join\/[A-Za-z0-9_-]{32}$/)
  const id = created.structuredContent.id as string
  const refused = await call('create_invite_link', { role: 'admin' })
  t.ok(refused.isError, 'a link never makes admins')
  t.equal(JSON.parse(refused.content[0]?.text ?? '{}').code, 'VALIDATION_FAILED')
  const listed = await call('list_invite_links', {})
  t.equal((listed.structuredContent.items as Array<{ id: string }>)[0]?.id, id)
  t.notOk('url' in ((listed.structuredContent.items as object[])[0] ?? {}))
  const revoked = await call('revoke_invite_link', { id })
  t.equal(revoked.structuredContent.status, 'revoked')
  const sources = await h.db.query<{ action: string, source: string }>(
    'SELECT action, source FROM audit_events WHERE target_id = $1 ORDER BY id', [id])
  t.same(sources.rows, [{ action: 'invite_link.created', source: 'mcp' }, { action: 'invite_link.revoked', source: 'mcp' }])
})

t.test('Slack: `/invite link` answers the person alone, as the invite policy allows', async t => {
  const command = async (user: string, text: string) => {
    const res = await slashCommand(h, slack, user, text)
    await h.app.services.slack.whenIdle()
    return { ack: res, answer: slack.responses().at(-1) as { response_type: string, text: string } }
  }
  const postsBefore = slack.posts().length
  const { ack, answer } = await command('U0ADMIN1', 'link')
  t.equal(ack.statusCode, 200)
  t.same(ack.json(), { response_type: 'ephemeral', text: 'Making an invite link for you…' })
  t.equal(answer.response_type, 'ephemeral', 'the link goes to the admin alone')
  const url = /(http\S+\/join\/[A-Za-z0-9_-]+)/.exec(answer.text)?.[1]
  t.ok(url, 'the answer carries a link')
  t.equal((await h.inject({ url: new URL(url ?? 'http://x/').pathname })).statusCode, 200, 'and it works')
  t.equal(slack.posts().length, postsBefore, 'nothing was posted to a channel')
  const stored = await h.db.query('SELECT payload::text AS p FROM chat_events')
  t.notOk(JSON.stringify(stored.rows).includes(url ?? '-'), 'the link is not kept with the command')

  t.match((await command('U0MEMBER', 'link')).answer.text, /only admins/, 'admins policy: members may not')
  const settings = async (invitePolicy: string) => await h.inject({
    method: 'PATCH', url: '/api/workspace/settings', headers: { cookie: admin.cookie, ...json }, payload: { invitePolicy }
  })
  t.equal((await settings('request')).statusCode, 200)
  const asked = await command('U0MEMBER', 'link')
  t.match(asked.answer.text, /waits for an admin's approval/)
  const links = await h.db.query<{ requires_approval: boolean, created_by: string }>(
    'SELECT requires_approval, created_by FROM invite_links WHERE created_by = $1', [member.userId])
  t.same(links.rows, [{ requires_approval: true, created_by: member.userId }], 'request policy: joins need approval')
  await settings('admins')
  t.match((await command('U0NOBODY', 'link')).answer.text, /only admins/, 'a stranger gets nothing')
})
