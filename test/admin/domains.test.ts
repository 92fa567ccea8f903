import t from 'tap'
import dns2 from 'dns2'
import type { LightMyRequestResponse } from 'fastify'
import { build, type SignedIn } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { startSmtp, type CaughtMail } from '../helpers/smtp.js'
import { createApiKey, mcpRequest } from '../helpers/mcp.js'

// Join by verified domain (issue 28, part 3): /api/domains, the TXT record looked up through a
// real loopback DNS server (dns2) by the production resolver adapter (DNS_SERVERS), the 30-day
// failure through the Clock port, the join links a person at a verified domain gets on /login
// (suggest → an invite request, auto_join → a member), and the MCP tools. One app per file.

const { Packet } = dns2
/** What the loopback name server answers: TXT records by name (each record its strings). */
const records = new Map<string, string[][]>()
/** Names the server never answers (a DNS server that times out). */
const silent = new Set<string>()
const dns = dns2.createServer({
  udp: true,
  handle: (request, send) => {
    const response = Packet.createResponseFromRequest(request)
    const name = request.questions[0]?.name ?? ''
    if (silent.has(name)) return
    for (const data of records.get(name) ?? []) {
      const answer = { name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 60, data }
      response.answers.push(answer as unknown as (typeof response.answers)[number])
    }
    send(response)
  }
})
const addresses = await dns.listen({ udp: { port: 0, address: '127.0.0.1' } })
t.teardown(async () => { await dns.close() })

const smtp = await startSmtp(t)
const h = await build(t, {
  env: {
    SMTP_URL: smtp.url,
    DNS_SERVERS: `127.0.0.1:${addresses.udp?.port ?? 0}`,
    DNS_TIMEOUT_MS: '200',
    APP_URL: 'http://app.example.test',
    AUTH_RATE_LIMIT_PER_MINUTE: '1000'
  }
})
const DAY = 86_400_000

interface Domain {
  id: string, domain: string, status: string, policy: string, verification: { name: string, value: string }
}

async function call (
  who: SignedIn | null, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown
): Promise<LightMyRequestResponse> {
  const res = await h.inject({
    method,
    url,
    headers: { ...(who !== null ? { cookie: who.cookie } : {}), ...(payload !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(payload !== undefined ? { payload: payload as Record<string, unknown> } : {})
  })
  const template = url.replace(/\/api\/domains\/[^/]+/, '/api/domains/{domainId}').replace(/\?.*$/, '')
  assertContract(t, method, template, res)
  return res
}

function publish (d: Domain, value = d.verification.value): void {
  // Split in two character-strings, as long TXT values are: they are joined before comparing.
  records.set(d.verification.name, [[value.slice(0, 10), value.slice(10)]])
}

type AuditRow = { payload: Record<string, unknown>, actor: { type: string } }

async function audit (admin: SignedIn, action: string): Promise<AuditRow[]> {
  const res = await h.inject({ url: `/api/audit-events?action=${action}`, headers: { cookie: admin.cookie } })
  return res.json().items
}

async function add (admin: SignedIn, body: Record<string, unknown>): Promise<Domain> {
  const res = await call(admin, 'POST', '/api/domains', body)
  if (res.statusCode !== 201) throw new Error(`POST /api/domains ${res.statusCode} ${res.body}`)
  return res.json()
}

t.test('add, look up the TXT record, verify; refusals; one workspace per verified domain', async t => {
  const admin = await h.signIn({ workspaceName: 'Acme Robotics' })
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  const other = await h.signIn({ workspaceName: 'Elsewhere' })

  const d = await add(admin, { domain: 'Acme-Robotics.COM.', policy: 'suggest' })
  t.match(d, {
    domain: 'acme-robotics.com',
    status: 'pending',
    policy: 'suggest',
    verification: { type: 'TXT', name: '_workspace-verification.acme-robotics.com', value: /^ws-verify=[A-Za-z0-9_-]{43}$/ },
    checkedAt: null,
    verifiedAt: null
  })
  t.equal(Date.parse((d as unknown as { failsAt: string }).failsAt) - h.clock.now().getTime(), 30 * DAY, 'fails in 30 days')
  const idn = await add(admin, { domain: 'Bücher-Beispiel.de' })
  t.equal(idn.domain, 'xn--bcher-beispiel-gsb.de', 'an internationalized name in its ASCII form')
  t.equal(idn.policy, 'off', 'policy off unless told')
  t.not(idn.verification.value, d.verification.value, 'a token of its own')

  for (const [domain, why] of [
    ['gmail.com', /gmail\.com is a consumer mail provider/],
    ['GMX.de', /gmx\.de is a consumer mail provider/],
    ['localhost', /not a domain name/],
    ['intranet.local', /reserved/],
    ['10.0.0.1', /not a domain name/],
    ['-bad-.com', /not a domain name/],
    ['xn--zz.com', /not a domain name|does not convert/]
  ] as const) {
    const res = await call(admin, 'POST', '/api/domains', { domain })
    t.equal(res.statusCode, 400, domain)
    t.match(res.json(), { code: 'DOMAIN_NOT_ALLOWED', message: why }, domain)
  }
  t.equal((await call(admin, 'POST', '/api/domains', { domain: 'https://acme.com/' })).statusCode, 400, 'not a URL')
  const again = await call(admin, 'POST', '/api/domains', { domain: 'ACME-ROBOTICS.com' })
  t.match([again.statusCode, again.json().code], [409, 'DOMAIN_EXISTS'])
  t.equal((await call(member, 'POST', '/api/domains', { domain: 'member.com' })).statusCode, 403, 'admins only')
  t.equal((await call(member, 'GET', '/api/domains')).statusCode, 403)

  // No record, then a wrong one: still pending, and why.
  const url = `/api/domains/${d.id}/verify`
  const none = await call(admin, 'POST', url)
  t.match(none.json(), { status: 'pending', checkError: /no TXT record/, checkedAt: String })
  publish(d, 'ws-verify=someone-elses-token-someone-elses-token-xx')
  t.match((await call(admin, 'POST', url)).json(), { status: 'pending', checkError: /no TXT record/ })
  silent.add(d.verification.name)
  t.match((await call(admin, 'POST', url)).json(), { status: 'pending', checkError: /DNS lookup .* failed/ }, 'no answer')
  silent.delete(d.verification.name)
  t.equal((await audit(admin, 'domain.verified')).length, 0)

  publish(d)
  const verified = await call(admin, 'POST', url)
  t.equal(verified.statusCode, 200)
  t.match(verified.json(), { status: 'verified', checkError: null, verifiedAt: String, failsAt: null })
  t.match(await audit(admin, 'domain.verified'), [{ payload: { domain: 'acme-robotics.com' }, actor: { type: 'user' } }])
  t.match(await audit(admin, 'domain.added'), [{ payload: { domain: 'xn--bcher-beispiel-gsb.de' } }, { payload: { domain: 'acme-robotics.com' } }])

  const list = await call(admin, 'GET', '/api/domains')
  t.same(list.json().items.map((x: Domain) => [x.domain, x.status]).sort(), [['acme-robotics.com', 'verified'], ['xn--bcher-beispiel-gsb.de', 'pending']])
  t.equal((await call(admin, 'GET', `/api/domains/${d.id}`)).json().status, 'verified')
  t.equal((await call(other, 'GET', `/api/domains/${d.id}`)).statusCode, 404, 'not another workspace\'s')
  t.equal((await call(admin, 'GET', '/api/domains/not-a-uuid')).statusCode, 400)

  // Verified here: another workspace can neither add it nor verify it.
  const claimed = await call(other, 'POST', '/api/domains', { domain: 'acme-robotics.com' })
  t.match([claimed.statusCode, claimed.json().code], [409, 'DOMAIN_CLAIMED'])
  const mine = await add(other, { domain: 'shared-corp.com' })
  const theirs = await add(admin, { domain: 'shared-corp.com' })
  records.set(mine.verification.name, [[mine.verification.value], [theirs.verification.value]])
  t.equal((await call(admin, 'POST', `/api/domains/${theirs.id}/verify`)).json().status, 'verified', 'first to verify')
  const second = await call(other, 'POST', `/api/domains/${mine.id}/verify`)
  t.match([second.statusCode, second.json().code], [409, 'DOMAIN_CLAIMED'], 'the second cannot')
  t.equal((await call(other, 'GET', `/api/domains/${mine.id}`)).json().status, 'pending')

  // Removed: the other workspace may verify it now.
  t.equal((await call(admin, 'DELETE', `/api/domains/${theirs.id}`)).statusCode, 204)
  t.equal((await call(admin, 'DELETE', `/api/domains/${theirs.id}`)).statusCode, 404)
  t.match(await audit(admin, 'domain.removed'), [{ payload: { domain: 'shared-corp.com' } }])
  t.equal((await call(other, 'POST', `/api/domains/${mine.id}/verify`)).json().status, 'verified')
})

t.test('the job looks at pending domains; 30 days pending is failed; a failed one can be verified', async t => {
  let admin = await h.signIn({ workspaceName: 'Later' })
  const late = await add(admin, { domain: 'late-corp.com' })
  const soon = await add(admin, { domain: 'soon-corp.com' })
  publish(soon)
  const first = await h.app.services.domains.recheck()
  t.ok(first.verified >= 1, 'the published one is verified by the job')
  t.match((await call(admin, 'GET', `/api/domains/${soon.id}`)).json(), { status: 'verified' })
  t.match(await audit(admin, 'domain.verified'), [{ actor: { type: 'system' } }])
  t.match((await call(admin, 'GET', `/api/domains/${late.id}`)).json(), { status: 'pending', checkedAt: String })
  const again = await h.app.services.domains.recheck()
  t.equal(again.looked, 0, 'nothing is looked at twice within the hour')

  h.clock.advance(29 * DAY)
  await h.app.services.domains.recheck()
  // Sessions last a week: the admin signs in again after the clock moved.
  admin = await h.signIn({ workspaceId: admin.workspaceId })
  t.match((await call(admin, 'GET', `/api/domains/${late.id}`)).json(), { status: 'pending' }, '29 days: pending')
  h.clock.advance(DAY + 3_600_000)
  await h.app.services.domains.recheck()
  admin = await h.signIn({ workspaceId: admin.workspaceId })
  const failed = (await call(admin, 'GET', `/api/domains/${late.id}`)).json()
  t.match(failed, { status: 'failed', failedAt: String, failsAt: null, checkError: /no TXT record/ })
  t.match(await audit(admin, 'domain.failed'), [{ payload: { domain: 'late-corp.com' }, actor: { type: 'system' } }])

  publish(late)
  t.match((await call(admin, 'POST', `/api/domains/${late.id}/verify`)).json(), { status: 'verified' }, 'published at last')
})

/** The next e-mail to `to`, and the token of its link. */
async function mailTo (to: string, seen: number): Promise<{ mail: CaughtMail, token: string }> {
  for (let n = seen; ; n++) {
    const mail = await smtp.nextMessage(n)
    if (!mail.to.includes(to)) continue
    const token = /token=([A-Za-z0-9_-]+)/.exec(mail.text)?.[1] ?? ''
    return { mail, token }
  }
}

t.test('a person at a verified domain: suggest → invite request, auto_join → member', async t => {
  const admin = await h.signIn({ workspaceName: 'Hopper Labs' })
  const d = await add(admin, { domain: 'hopper-labs.com', policy: 'suggest' })
  publish(d)
  await call(admin, 'POST', `/api/domains/${d.id}/verify`)

  let seen = smtp.messages.length
  t.equal((await call(null, 'POST', '/api/auth/login-link', { email: 'grace@hopper-labs.com' })).statusCode, 202)
  const asked = await mailTo('grace@hopper-labs.com', seen)
  t.equal(asked.mail.subject, 'Ask to join Hopper Labs')
  t.match(asked.mail.text, /http:\/\/app\.example\.test\/domain-join\?token=/)

  // Opening the link (a person or a mail scanner) changes nothing.
  const page = await h.inject({ url: `/domain-join?token=${asked.token}` })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-security-policy'], /script-src 'nonce-/)
  const preview = await call(null, 'POST', '/api/domain-joins/preview', { token: asked.token })
  t.match(preview.json(), { email: 'grace@hopper-labs.com', workspace: { name: 'Hopper Labs' }, policy: 'suggest', domain: 'hopper-labs.com' })
  t.equal((await call(admin, 'GET', '/api/invite-requests')).json().items.length, 0, 'no request before confirming')

  const requested = await call(null, 'POST', '/api/domain-joins', { token: asked.token })
  t.equal(requested.statusCode, 202)
  t.match(requested.json().message, /with its admins/)
  t.equal(requested.headers['set-cookie'], undefined, 'nobody is signed in')
  const requests = (await call(admin, 'GET', '/api/invite-requests')).json().items
  t.match(requests, [{ email: 'grace@hopper-labs.com', role: 'member', status: 'pending', requestedBy: null }])
  t.match(await audit(admin, 'invite_request.created'), [{ payload: { domain: 'hopper-labs.com' } }])
  const reused = await call(null, 'POST', '/api/domain-joins', { token: asked.token })
  t.match([reused.statusCode, reused.json().code], [410, 'TOKEN_USED'])
  // The admins approve through the existing flow: the invitation is e-mailed.
  seen = smtp.messages.length
  const approved = await h.inject({
    method: 'POST', url: `/api/invite-requests/${requests[0].id}/approve`, headers: { cookie: admin.cookie, 'content-type': 'application/json' }, payload: {}
  })
  t.equal(approved.statusCode, 200)
  t.match((await mailTo('grace@hopper-labs.com', seen)).mail.text, /signup\?token=/)

  // auto_join: confirming makes a member, signed in.
  t.equal((await call(admin, 'PATCH', `/api/domains/${d.id}`, { policy: 'auto_join' })).json().policy, 'auto_join')
  t.match(await audit(admin, 'domain.policy_changed'), [{ payload: { from: 'suggest', to: 'auto_join' } }])
  seen = smtp.messages.length
  await call(null, 'POST', '/api/auth/login-link', { email: 'alan@hopper-labs.com' })
  const invited = await mailTo('alan@hopper-labs.com', seen)
  t.equal(invited.mail.subject, 'Join Hopper Labs')
  t.equal((await call(null, 'POST', '/api/domain-joins/preview', { token: invited.token })).json().policy, 'auto_join')
  const joined = await call(null, 'POST', '/api/domain-joins', { token: invited.token, name: 'Alan Turing' })
  t.equal(joined.statusCode, 201)
  t.match(joined.json(), { user: { email: 'alan@hopper-labs.com', role: 'member', name: 'Alan Turing' }, workspace: { id: admin.workspaceId } })
  const cookie = String(joined.headers['set-cookie']).split(';')[0] ?? ''
  t.equal((await h.inject({ url: '/api/users/me', headers: { cookie } })).json().user.email, 'alan@hopper-labs.com')
  t.match(await audit(admin, 'member.joined'), [{ payload: { email: 'alan@hopper-labs.com', domain: 'hopper-labs.com', domainId: d.id } }])
  const feed = (await h.inject({ url: '/api/events?types=member.joined', headers: { cookie: admin.cookie } })).json()
  t.match(feed.items, [{ type: 'member.joined', data: { email: 'alan@hopper-labs.com', role: 'member', domain: 'hopper-labs.com', domainId: d.id } }])

  // Now a member: the ordinary sign-in link. Another address, policy off: nothing is sent.
  seen = smtp.messages.length
  await call(null, 'POST', '/api/auth/login-link', { email: 'alan@hopper-labs.com' })
  t.equal((await mailTo('alan@hopper-labs.com', seen)).mail.subject, 'Your sign-in link')
  seen = smtp.messages.length
  await call(null, 'POST', '/api/auth/login-link', { email: 'ada@hopper-labs.com' })
  const stale = await mailTo('ada@hopper-labs.com', seen)
  await call(admin, 'PATCH', `/api/domains/${d.id}`, { policy: 'off' })
  seen = smtp.messages.length
  await call(null, 'POST', '/api/auth/login-link', { email: 'edsger@hopper-labs.com' })
  await h.app.services.auth.idle()
  t.equal(smtp.messages.length, seen, 'policy off: no join link')
  // A link sent before the policy went off leads nowhere now.
  const gone = await call(null, 'POST', '/api/domain-joins', { token: stale.token })
  t.match([gone.statusCode, gone.json().code], [400, 'TOKEN_INVALID'])
  const forged = await call(null, 'POST', '/api/domain-joins/preview', { token: 'x'.repeat(43) })
  t.match([forged.statusCode, forged.json().code], [400, 'TOKEN_INVALID'])
})

t.test('MCP: list_domains, add_domain, verify_domain', async t => {
  const admin = await h.signIn({ workspaceName: 'Tools' })
  const key = (await createApiKey(h, admin)).secret
  const tool = async (name: string, args: Record<string, unknown>) => {
    const res = await mcpRequest(h, key, 'tools/call', { name, arguments: args })
    t.equal(res.statusCode, 200)
    type ToolResult = { isError?: boolean, content: Array<{ text: string }>, structuredContent: Record<string, never> }
    return res.json().result as ToolResult
  }
  const added = await tool('add_domain', { domain: 'tools-corp.com', policy: 'auto_join' })
  t.match(added.structuredContent, { domain: 'tools-corp.com', status: 'pending', policy: 'auto_join' })
  const d = added.structuredContent as unknown as Domain
  const refused = await tool('add_domain', { domain: 'outlook.com' })
  t.equal(refused.isError, true)
  t.match(JSON.parse(refused.content[0]?.text ?? '{}'), { code: 'DOMAIN_NOT_ALLOWED' })
  t.match((await tool('verify_domain', { id: d.id })).structuredContent, { status: 'pending' })
  publish(d)
  t.match((await tool('verify_domain', { id: d.id })).structuredContent, { status: 'verified' })
  t.match((await tool('list_domains', {})).structuredContent, { items: [{ domain: 'tools-corp.com', status: 'verified' }] })
  t.match(await audit(admin, 'domain.added'), [{ payload: { domain: 'tools-corp.com' } }])
})

t.test('capital letters: the one e-mail rule at the verified-domain door', async t => {
  const admin = await h.signIn({ workspaceName: 'Capital Case' })
  const d = await add(admin, { domain: 'Capital-Case.COM', policy: 'auto_join' })
  t.equal(d.domain, 'capital-case.com', 'the domain is stored in lower case')
  publish(d)
  t.equal((await call(admin, 'POST', `/api/domains/${d.id}/verify`)).json().status, 'verified')

  for (const [given, stored] of [
    ['Ada.Lovelace@capital-case.com', 'ada.lovelace@capital-case.com'], // a capital in the local part
    ['grace@CAPITAL-CASE.COM', 'grace@capital-case.com'] // an upper-case domain
  ] as const) {
    const seen = smtp.messages.length
    t.equal((await call(null, 'POST', '/api/auth/login-link', { email: given })).statusCode, 202)
    const { mail, token } = await mailTo(stored, seen)
    t.equal(mail.subject, 'Join Capital Case', `${given}: a join link, to the address in lower case`)
    t.equal((await call(null, 'POST', '/api/domain-joins/preview', { token })).json().email, stored)
    const joined = await call(null, 'POST', '/api/domain-joins', { token })
    t.equal(joined.statusCode, 201, joined.body)
    t.equal(joined.json().user.email, stored)
    // Now a member: the same address in any case is that member (no second account, a sign-in link).
    const again = smtp.messages.length
    await call(null, 'POST', '/api/auth/login-link', { email: given.toUpperCase() })
    t.equal((await mailTo(stored, again)).mail.subject, 'Your sign-in link', `${given}: one account, whatever the case`)
  }
})
