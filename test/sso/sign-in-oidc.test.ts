import t from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { build, type SignedIn } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { startOidcProvider, type TestProfile } from '../helpers/oidc-provider.js'
import {
  cookieOf, createConnection, ENCRYPTION_KEY, PUBLIC_URL, RealTimeClock, refusals, refused, verifiedDomain, writes
} from '../helpers/sso-sign-in.js'

// Sign-in through a workspace's OpenID Connect connection (issue 53, items 2 and 4), over HTTP
// against oidc-provider on loopback: GET /api/oauth/sso?email= → the provider → the callback.
// Who signs in (linked identity, existing member, invitation, created member, test sign-in), and
// each refusal with nothing signed in and only its audit line written.

const CALLBACK = `${PUBLIC_URL}/api/oauth/sso/callback`
const ACME = 'acme-robotics.test'
const GLOBEX = 'globex.test'
const acmeAccounts: Record<string, Record<string, unknown>> = {
  alice: { email: `alice@${ACME}`, email_verified: true, name: 'Alice Adams' },
  bob: { email: `bob@${ACME}`, email_verified: false, name: 'Bob Brown' },
  dora: { email: `dora@${ACME}`, email_verified: true },
  sam: { email: `sam@${ACME}`, email_verified: true },
  ivy: { email: `ivy@${ACME}`, email_verified: true, name: 'Ivy Invited' },
  outsider: { email: 'outsider@elsewhere.test', email_verified: true }
}
const idp = await startOidcProvider(t, {
  redirectUris: [CALLBACK],
  profiles: [
    { name: 'okta', kind: 'okta', accounts: acmeAccounts },
    { name: 'globex', kind: 'okta', accounts: { gina: { email: `gina@${GLOBEX}`, email_verified: true, name: 'Gina' } } },
    { name: 'entra', kind: 'entra', accounts: { carol: { email: 'carol@contoso.test', xms_edov: true } } }
  ]
})
const h = await build(t, { clock: new RealTimeClock(), env: { PUBLIC_URL, ENCRYPTION_KEY, AUTH_RATE_LIMIT_PER_MINUTE: '1000' } })

const oidcBody = (p: TestProfile, over: Record<string, unknown> = {}) => ({
  name: p.name,
  protocol: 'oidc',
  oidc: {
    issuer: p.issuer,
    clientId: p.clientId,
    clientSecret: p.clientSecret,
    ...(p.kind === 'entra' ? { tenantId: p.tenant } : {})
  },
  ...over
})

async function workspace (domain: string, profile: string, over: Record<string, unknown> = {}) {
  const admin = await h.signIn({ workspaceName: domain })
  await verifiedDomain(h, admin.workspaceId, domain)
  const connectionId = await createConnection(h, admin, oidcBody(idp.profile(profile), { domains: [domain], ...over }))
  return { admin, connectionId }
}

const acme = await workspace(ACME, 'okta')
const globex = await workspace(GLOBEX, 'globex', { accounts: 'create', defaultRole: 'member' })
const contoso = await workspace('contoso.test', 'entra')

async function get (url: string, cookie?: string): Promise<LightMyRequestResponse> {
  const res = await h.inject({ method: 'GET', url, headers: cookie === undefined ? {} : { cookie } })
  assertContract(t, 'GET', url.split('?')[0] ?? url, res)
  return res
}

/** Up to the provider's redirect back: the callback's path and query, and this browser's state cookie. */
async function toCallback (start: string, login: string, cookie?: string): Promise<{ url: string, state: string }> {
  const res = await get(start, cookie)
  if (res.statusCode !== 302) throw new Error(`start: ${res.statusCode} ${res.body}`)
  const state = cookieOf(res, 'sso_state')
  if (state === undefined) throw new Error('no state cookie')
  const back = await idp.signIn(res.headers.location as string, login)
  return { url: back.pathname + back.search, state }
}

async function signIn (email: string, login = email.split('@')[0] as string) {
  const { url, state } = await toCallback(`/api/oauth/sso?email=${encodeURIComponent(email)}`, login)
  return await get(url, `sso_state=${state}`)
}

async function me (res: LightMyRequestResponse) {
  const session = cookieOf(res, 'service_session')
  const r = await get('/api/users/me', `service_session=${session ?? ''}`)
  return r.json() as { user: { id: string, email: string, role: string }, workspace: { id: string } }
}

t.test('the start: an address at a served domain goes to its provider, others get 404', async t => {
  const res = await get(`/api/oauth/sso?email=alice@${ACME}`)
  t.equal(res.statusCode, 302)
  const location = new URL(res.headers.location as string)
  t.equal(location.origin + location.pathname, `${idp.profile('okta').issuer}/auth`)
  t.equal(location.searchParams.get('code_challenge_method'), 'S256')
  t.equal(location.searchParams.get('redirect_uri'), CALLBACK)
  const cookie = res.cookies.find(c => c.name === 'sso_state')
  t.match(cookie, { httpOnly: true, sameSite: 'Lax', path: '/api/oauth/sso/callback' }, 'the state is bound to this browser')
  t.equal(cookie?.value, location.searchParams.get('state'))
  const stored = await h.db.query<{ verifier: string }>('SELECT oidc_verifier_enc AS verifier FROM sso_flows')
  t.ok(stored.rows.length > 0 && stored.rows.every(r => !/^[\w-]{43}$/.test(r.verifier)), 'the PKCE verifier is sealed')

  const unknown = await get('/api/oauth/sso?email=ada@unknown-domain.test')
  t.equal(unknown.statusCode, 404)
  t.equal(unknown.json().code, 'SSO_CONNECTION_NOT_FOUND')
  const none = await get('/api/oauth/sso')
  t.equal(none.statusCode, 400)
})

t.test('an existing member is linked at the first sign-in, and signed in by the identity after', async t => {
  const alice = await h.signIn({ workspaceId: acme.admin.workspaceId, email: `alice@${ACME}`, role: 'member' })
  const first = await signIn(`alice@${ACME}`)
  t.equal(first.statusCode, 302, first.body)
  t.equal(first.headers.location, `${h.config.appUrl}/`)
  t.equal((await me(first)).user.id, alice.userId, 'signed in as the member')
  const identity = await h.db.query<{ subject: string }>(
    'SELECT subject FROM sso_identities WHERE user_id = $1', [alice.userId])
  t.same(identity.rows, [{ subject: 'alice' }], 'linked by (connection, issuer, subject)')

  // The provider now states another address: the identity, not the address, says who this is.
  acmeAccounts.alice = { ...acmeAccounts.alice, email: `alice.adams@${ACME}` }
  t.teardown(() => { acmeAccounts.alice = { ...acmeAccounts.alice, email: `alice@${ACME}` } })
  const { url, state } = await toCallback(`/api/oauth/sso?email=alice@${ACME}`, 'alice')
  const second = await get(url, `sso_state=${state}`)
  t.equal(second.statusCode, 302)
  t.equal((await me(second)).user.id, alice.userId, 'the linked member, whatever the address')
  const logins = await h.db.query<{ payload: { method: string } }>(
    'SELECT payload FROM audit_events WHERE action = \'session.login\' AND actor_id = $1', [alice.userId])
  t.equal(logins.rows.filter(r => r.payload.method === 'sso').length, 2, 'each sign-in audited')
})

t.test('a pending invitation is accepted at the first sign-in, as the signup page accepts it', async t => {
  await h.db.query(
    `INSERT INTO invitations (workspace_id, email, role, token_hash, status, expires_at, invited_by, created_at, updated_at,
        last_sent_at)
     VALUES ($1, $2, 'member', 'sso-test-token-hash', 'pending', now() + interval '1 day', $3, now(), now(), now())`,
    [acme.admin.workspaceId, `ivy@${ACME}`, acme.admin.userId])
  const res = await signIn(`ivy@${ACME}`)
  t.equal(res.statusCode, 302, res.body)
  const who = await me(res)
  t.equal(who.user.email, `ivy@${ACME}`)
  const inv = await h.db.query<{ status: string }>('SELECT status FROM invitations WHERE email = $1', [`ivy@${ACME}`])
  t.same(inv.rows, [{ status: 'accepted' }])
})

t.test('accounts: create makes a member with the default role, audited and evented as a join', async t => {
  const res = await signIn(`gina@${GLOBEX}`)
  t.equal(res.statusCode, 302, res.body)
  const who = await me(res)
  t.match(who, { user: { email: `gina@${GLOBEX}`, role: 'member' }, workspace: { id: globex.admin.workspaceId } })
  const joined = await h.db.query<{ payload: Record<string, unknown> }>(
    'SELECT payload FROM audit_events WHERE action = \'member.joined\' AND target_id = $1', [who.user.id])
  t.match(joined.rows, [{ payload: { email: `gina@${GLOBEX}`, role: 'member', connectionId: globex.connectionId } }])
  const again = await signIn(`gina@${GLOBEX}`)
  t.equal((await me(again)).user.id, who.user.id, 'the second sign-in finds the same member')
})

t.test('a test sign-in shows the claims and signs no one in', async t => {
  const before = await writes(h)
  const url = `/api/oauth/sso?connection=${acme.connectionId}`
  t.equal((await get(url)).statusCode, 401, 'an admin session is required')
  const member = await h.signIn({ workspaceId: acme.admin.workspaceId, role: 'member' })
  t.equal((await get(url, member.cookie)).statusCode, 403, 'a member may not')
  const other: SignedIn = await h.signIn()
  t.equal((await get(url, other.cookie)).statusCode, 404, 'another workspace\'s admin does not see it')
  const after = await writes(h)
  const { url: back, state } = await toCallback(url, 'sam', acme.admin.cookie)
  const res = await get(back, `sso_state=${state}`)
  t.equal(res.statusCode, 200)
  t.match(res.json(), {
    connectionId: acme.connectionId, protocol: 'oidc', subject: 'sam', email: `sam@${ACME}`, emailVerified: true
  })
  t.equal(cookieOf(res, 'service_session'), undefined, 'no session')
  t.same(await writes(h), after, 'nothing written by the test sign-in')
  t.equal(after.users, before.users + 2)
})

t.test('refusals: nothing signed in, only an audit line', async t => {
  const id = acme.connectionId
  await refused(t, h, id, 'email_not_verified', 'email_not_verified', async () => await signIn(`bob@${ACME}`))
  await refused(t, h, id, 'not_a_member', 'not_a_member', async () => await signIn(`sam@${ACME}`))
  await refused(t, h, id, 'domain_not_served', 'domain_not_served',
    async () => await signIn(`alice@${ACME}`, 'outsider'))
  const dora = await h.signIn({ workspaceId: acme.admin.workspaceId, email: `dora@${ACME}`, role: 'member' })
  await h.db.query('UPDATE users SET status = \'suspended\', suspended_by = \'admin\', suspended_at = now() WHERE id = $1', [dora.userId])
  await refused(t, h, id, 'suspended', 'not_a_member', async () => await signIn(`dora@${ACME}`))

  // The state: another browser's cookie, none, a replay.
  const { url, state } = await toCallback(`/api/oauth/sso?email=alice@${ACME}`, 'alice')
  const other = await toCallback(`/api/oauth/sso?email=alice@${ACME}`, 'alice')
  await refused(t, h, id, 'state_mismatch', 'state_mismatch', async () => await get(url, `sso_state=${other.state}`))
  const fresh = await toCallback(`/api/oauth/sso?email=alice@${ACME}`, 'alice')
  await refused(t, h, id, 'state_mismatch', 'state_mismatch', async () => await get(fresh.url))
  const once = await toCallback(`/api/oauth/sso?email=alice@${ACME}`, 'alice')
  t.equal((await get(once.url, `sso_state=${once.state}`)).statusCode, 302, 'the genuine callback signs in')
  await refused(t, h, id, 'state_replayed', 'state_replayed', async () => await get(once.url, `sso_state=${once.state}`))
  t.ok(state !== other.state)

  // The ID token of another client (forged with the provider's own key).
  const forged = await toCallback(`/api/oauth/sso?email=alice@${ACME}`, 'alice')
  idp.tamperNextIdToken('okta', async claims => await idp.sign('okta', { ...claims, aud: 'another-client' }))
  await refused(t, h, id, 'audience_mismatch', 'audience_mismatch',
    async () => await get(forged.url, `sso_state=${forged.state}`))
})

t.test('Entra ID: a token of another tenant is refused', async t => {
  const { url, state } = await toCallback('/api/oauth/sso?email=carol@contoso.test', 'carol')
  idp.tamperNextIdToken('entra', async claims =>
    await idp.sign('entra', { ...claims, tid: '00000000-0000-4000-8000-000000000001' }))
  await refused(t, h, contoso.connectionId, 'tenant_mismatch', 'tenant_mismatch',
    async () => await get(url, `sso_state=${state}`))
  t.same((await refusals(h, contoso.connectionId)).length, 1)
})
