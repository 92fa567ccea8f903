import t from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { build } from '../helpers/build.js'
import { deref } from '../helpers/contract.js'
import { startSmtp } from '../helpers/smtp.js'
import { createApiKey } from '../helpers/mcp.js'
import { SCIM_TYPE } from '../helpers/scim.js'
import { loadContract } from '../../src/app.js'
import { SESSION_COOKIE } from '../../src/sessions/service.js'
import { randomToken } from '../../src/lib/tokens.js'

// A suspended member gets no session by any way in, links and tokens e-mailed before the
// suspension included (issue 41). The ways in are the contract's: every operation whose answer
// sets service_session (a Set-Cookie of SetSessionCookie). Each has its case below, or the reason
// it has none here; a new one fails this file until it has either.
//
// Each case: a link is e-mailed (or an invitation made) while the address is no member, or an
// active one; then the company directory provisions the address suspended, or deactivates the
// member (SCIM, as Okta does); then the link is used: refused, no cookie, no session.

const smtp = await startSmtp(t)
const h = await build(t, {
  env: { SMTP_URL: smtp.url, APP_URL: 'http://app.example.test', AUTH_RATE_LIMIT_PER_MINUTE: '1000' }
})
const admin = await h.signIn({ role: 'admin', workspaceName: 'Acme' })
const directory = (await createApiKey(h, admin, 'Okta', ['scim'])).secret

type Answer = LightMyRequestResponse
const post = async (url: string, payload: Record<string, unknown>, cookie?: string): Promise<Answer> =>
  await h.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', ...(cookie !== undefined ? { cookie } : {}) },
    payload
  })

/** The directory's request: provisions a person (active or not), or sets a member's `active`. */
async function scim (method: 'POST' | 'PATCH', url: string, body: unknown): Promise<{ id: string }> {
  const res = await h.inject({
    method, url, headers: { authorization: `Bearer ${directory}`, 'content-type': SCIM_TYPE }, payload: JSON.stringify(body)
  })
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`)
  return res.json()
}
const provision = async (email: string, active: boolean) => await scim('POST', '/api/scim/v2/Users', {
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: email, emails: [{ value: email, primary: true }], active
})
const setActive = async (id: string, active: boolean) => await scim('PATCH', `/api/scim/v2/Users/${id}`, {
  schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', value: { active } }]
})

/** The link e-mailed to `to` since `seen` messages, by the query parameter that carries its token. */
async function emailedToken (to: string, seen: number, param: string): Promise<string> {
  await h.app.services.auth.idle()
  const mail = await smtp.nextMessage(seen)
  const token = new RegExp(`[?&]${param}=([A-Za-z0-9_-]+)`).exec(mail.text)?.[1]
  if (token === undefined || !mail.to.includes(to)) throw new Error(`no ${param} link to ${to}: ${mail.text}`)
  return token
}

interface Way {
  /** Is the address a member when the link is made: an active one, or none yet. */
  before: 'active member' | 'no member'
  /** Makes the link (or invitation) for `email`; returns how it is used. */
  issue: (email: string) => Promise<() => Promise<Answer>>
  /** The domain the address must be at (the verified-domain door). */
  domain?: string
}

const JOIN_DOMAIN = 'joins.example.com'

const ways: Record<string, Way | string> = {
  postAuthVerify: {
    before: 'active member',
    issue: async email => {
      const seen = smtp.messages.length
      if ((await post('/api/auth/login-link', { email })).statusCode !== 202) throw new Error('login-link')
      const token = await emailedToken(email, seen, 'token')
      return async () => await post('/api/auth/verify', { token })
    }
  },
  postAuthSignup: {
    before: 'no member',
    issue: async email => {
      const res = await post('/api/users/invite', { email, role: 'member' }, admin.cookie)
      const token = new URL(String(res.json().invitationUrl)).searchParams.get('token') ?? ''
      return async () => await post('/api/auth/signup', { token, name: 'Too Late' })
    }
  },
  postJoinCodeConfirm: {
    before: 'no member',
    issue: async email => {
      const link = await post('/api/invite-links', {}, admin.cookie)
      const code = new URL(String(link.json().url)).pathname.split('/').pop() ?? ''
      const seen = smtp.messages.length
      if ((await post(`/api/join/${code}`, { email })).statusCode !== 202) throw new Error('join')
      const token = await emailedToken(email, seen, 'confirm')
      return async () => await post(`/api/join/${code}/confirm`, { token })
    }
  },
  postDomainJoins: {
    before: 'no member',
    domain: JOIN_DOMAIN,
    issue: async email => {
      // The workspace verified the domain and lets its people join at once (auto_join).
      await h.db.query(
        `INSERT INTO workspace_domains (workspace_id, domain, status, policy, token, verified_at, created_at, updated_at)
         VALUES ($1, $2, 'verified', 'auto_join', $3, $4, $4, $4)`,
        [admin.workspaceId, JOIN_DOMAIN, randomToken(), h.clock.now()])
      const seen = smtp.messages.length
      if ((await post('/api/auth/login-link', { email })).statusCode !== 202) throw new Error('login-link')
      const token = await emailedToken(email, seen, 'token')
      return async () => await post('/api/domain-joins', { token })
    }
  },
  postSetup: 'a setup link exists only while no workspace does: no member can be suspended before it is used',
  getOauthCallback: 'the identity provider\'s callback refuses a suspended member in test/auth/auth-oauth.test.ts, ' +
    'against its fake of WorkOS',
  getOauthSsoCallback: 'a company\'s OpenID Connect provider: test/sso/sign-in-oidc.test.ts refuses a suspended ' +
    'member with the stranger\'s answer, against oidc-provider',
  postSsoConnectionsConnectionIdSamlAcs: 'a company\'s SAML IdP: test/sso/sign-in-saml.test.ts refuses a suspended ' +
    'member with the stranger\'s answer, against samlify'
}

interface Op { operationId: string, responses?: Record<string, Response | { $ref: string }> }
interface Response { headers?: Record<string, { $ref?: string }> }
const contract = loadContract() as { paths: Record<string, Record<string, Op>> }
const answers = (op: Op): Response[] => Object.values(op.responses ?? {}).map(r => deref<Response>(r))
const setsSession = Object.values(contract.paths).flatMap(item => Object.values(item))
  .filter(op => typeof op === 'object' && op !== null && 'operationId' in op)
  .filter(op => answers(op).some(r => r.headers?.['Set-Cookie']?.$ref === '#/components/headers/SetSessionCookie'))
  .map(op => op.operationId)

t.test('the ways in are the contract\'s, each with its case', async t => {
  t.ok(setsSession.length >= 6, `the operations that set service_session: ${setsSession.join(', ')}`)
  t.same(setsSession.filter(id => !(id in ways)), [], 'each has a case here, or the reason it has none')
  t.same(Object.keys(ways).filter(id => !setsSession.includes(id)), [], 'and nothing else is listed')
})

for (const [operationId, way] of Object.entries(ways)) {
  if (typeof way === 'string') continue
  t.test(`${operationId}: a link made before the suspension gets no session after it`, async t => {
    const email = `${operationId.toLowerCase()}@${way.domain ?? 'suspend.example'}`
    const member = way.before === 'active member' ? await provision(email, true) : null
    const use = await way.issue(email)
    // The directory deactivates the member, or provisions the address deactivated.
    const id = member !== null ? (await setActive(member.id, false), member.id) : (await provision(email, false)).id

    const res = await use()
    t.ok(res.statusCode >= 400 && res.statusCode < 500, `refused: ${res.statusCode} ${res.body}`)
    t.equal(res.cookies.find(c => c.name === SESSION_COOKIE), undefined, 'no session cookie')
    const sessions = await h.db.query('SELECT id FROM sessions WHERE user_id = $1', [id])
    t.same(sessions.rows, [], 'no session row')
    if (operationId === 'postAuthVerify') {
      const unknown = await post('/api/auth/verify', { token: randomToken() })
      t.same([res.statusCode, res.json()], [unknown.statusCode, unknown.json()], 'answered as an unknown link')
    }

    // Reactivated, the member is back; the link made before the suspension is not.
    await setActive(id, true)
    const again = await use()
    t.ok(again.statusCode >= 400, `still refused after reactivation: ${again.statusCode}`)
    t.equal(again.cookies.find(c => c.name === SESSION_COOKIE), undefined)
  })
}
