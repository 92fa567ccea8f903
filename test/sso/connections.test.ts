import t from 'tap'
import { randomBytes, X509Certificate } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import { build, principalOf, testConfig, type SignedIn, type TestApp } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { ALL_SCOPES, createApiKey } from '../helpers/mcp.js'
import { buildStaging } from '../helpers/staging.js'
import { startFakeHttp } from '../helpers/fake-http.js'
import { openClientSecret, resealClientSecrets, ssoKeyring } from '../../src/sso/connection-secret.js'
import { oidcRedirectUri, samlEndpoints } from '../../src/sso/connection-context.js'

// Single sign-on connections per workspace (issue 53, item 1): /api/sso/connections, both
// protocols, the client secret sealed and never shown, the domain rules, the scopes of API keys,
// the address policy with SSO_ALLOWED_HOSTS, Entra ID's tenant rules and the certificates.

// An IdP's signing certificate: Node cannot make one, so this was made by `openssl req -x509
// -newkey ec` (P-256, valid for 10 years from 2026-12-07).
const PEM = `-----BEGIN CERTIFICATE-----
MIIBlTCCATugAwIBAgIUAt1DzT/ASl+OV1it5ereT5X3r/4wCgYIKoZIzj0EAwIw
IDEeMBwGA1UEAwwVaWRwLmFjbWUtcm9ib3RpY3MuY29tMB4XDTI2MTIwNzE0Mjk1
OFoXDTM2MTIwNDE0Mjk1OFowIDEeMBwGA1UEAwwVaWRwLmFjbWUtcm9ib3RpY3Mu
Y29tMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEblcoQf7u/rCjGdH+v55K8qRj
SBEEqAA6jFgb7TWByLTPiSc/vDbkst3hhQUbSqjSo2Fz0ydFv9QOX81YHpYvnKNT
MFEwHQYDVR0OBBYEFDG7SlBWqHvz3o/PJkcMu3jT0WnPMB8GA1UdIwQYMBaAFDG7
SlBWqHvz3o/PJkcMu3jT0WnPMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwID
SAAwRQIgXFAiqSDN8jl3jPd/yemv2eH1m9kFw6UISuV8nOWzNUMCIQDYeXyGWyo1
QAzAYDAERs1A2vYzzQE2M7zhUgiaRuDWOQ==
-----END CERTIFICATE-----
`
const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47'
// The IdP's metadata on loopback: a metadata URL is fetched once when a connection is saved.
const METADATA_XML = '<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.acme.test">' +
  '<IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"><KeyDescriptor use="signing">' +
  '<KeyInfo xmlns="http://www.w3.org/2000/09/xmldsig#"><X509Data><X509Certificate>' +
  `${PEM.replace(/-----[A-Z ]+-----|\s/g, '')}</X509Certificate></X509Data></KeyInfo></KeyDescriptor>` +
  '<SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.acme.test/sso"/>' +
  '</IDPSSODescriptor></EntityDescriptor>'
const idpSite = await startFakeHttp(t)
idpSite.on('GET /metadata', () => ({ text: METADATA_XML, headers: { 'content-type': 'application/samlmetadata+xml' } }))
const METADATA_URL = `${idpSite.url}/metadata`
const ENCRYPTION_KEY = randomBytes(32).toString('hex')

const h = await build(t, { env: { ENCRYPTION_KEY, PUBLIC_URL: 'http://localhost:3000', API_KEYS_PER_WORKSPACE: '100' } })

async function call (
  app: TestApp, who: SignedIn | { key: string } | null, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string,
  payload?: unknown
): Promise<LightMyRequestResponse> {
  const auth = who === null ? {} : 'key' in who ? { authorization: `Bearer ${who.key}` } : { cookie: who.cookie }
  const res = await app.inject({
    method,
    url,
    headers: { ...auth, ...(payload !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(payload !== undefined ? { payload: JSON.stringify(payload) } : {})
  })
  assertContract(t, method, url, res)
  return res
}

/** A domain of the workspace, verified (or as `status` says), as the DNS check would leave it. */
async function domain (app: TestApp, workspaceId: string, name: string, status = 'verified'): Promise<string> {
  const r = await app.db.query<{ id: string }>(
    `INSERT INTO workspace_domains (workspace_id, domain, status, token, verified_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4, CASE WHEN $3 = 'verified' THEN now() END, now(), now()) RETURNING id`,
    [workspaceId, name, status, randomBytes(32).toString('hex')])
  return r.rows[0]?.id as string
}

const oidc = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: 'Okta',
  protocol: 'oidc',
  oidc: { issuer: 'https://acme.okta.com', clientId: '0oa1b2c3d4', clientSecret: 'Xq7vJ2kP9sL4mN8rT1wY5zB3cF6hD0gK' },
  ...over
})
const saml = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: 'Company IdP',
  protocol: 'saml',
  saml: { idpMetadataUrl: METADATA_URL, idpCertificates: [PEM] },
  ...over
})

async function auditOf (app: TestApp, workspaceId: string, action: string): Promise<Array<Record<string, unknown>>> {
  const r = await app.db.query<{ payload: Record<string, unknown> }>(
    'SELECT payload FROM audit_events WHERE workspace_id = $1 AND action = $2 ORDER BY created_at', [workspaceId, action])
  return r.rows.map(row => row.payload)
}

t.test('OIDC: create, read, list, update, delete; the secret is sealed and never returned', async t => {
  const admin = await h.signIn()
  await domain(h, admin.workspaceId, 'acme-robotics.com')
  const secret = 'Xq7vJ2kP9sL4mN8rT1wY5zB3cF6hD0gK'
  const created = await call(h, admin, 'POST', '/api/sso/connections', oidc({
    domains: ['acme-robotics.com'], required: true
  }))
  t.equal(created.statusCode, 201)
  const c = created.json()
  t.match(c, {
    name: 'Okta',
    protocol: 'oidc',
    domains: ['acme-robotics.com'],
    accounts: 'existing',
    defaultRole: null,
    required: true,
    saml: null,
    oidc: {
      issuer: 'https://acme.okta.com',
      clientId: '0oa1b2c3d4',
      clientSecretSet: true,
      tenantId: null,
      redirectUri: 'http://localhost:3000/api/oauth/sso/callback'
    }
  })
  t.equal(c.oidc.redirectUri, oidcRedirectUri(h.config.publicUrl), 'what the sign-in flow sends as redirect_uri')
  t.notOk(created.body.includes(secret), 'the answer never carries the secret')
  const row = (await h.db.query<{ sealed: string, text: string }>(
    'SELECT oidc_client_secret_enc AS sealed, row_to_json(c)::text AS text FROM sso_connections c WHERE id = $1', [c.id]
  )).rows[0]
  t.notOk(row?.text.includes(secret), 'the row holds no plaintext secret')
  t.equal(openClientSecret(ssoKeyring(h.config), c.id, row?.sealed ?? ''), secret, 'it opens with the key, bound to the id')
  t.throws(() => openClientSecret(ssoKeyring(h.config), admin.userId, row?.sealed ?? ''), 'not under another id')

  const one = await call(h, admin, 'GET', `/api/sso/connections/${c.id as string}`)
  t.same(one.json(), c, 'read back as created')
  const list = await call(h, admin, 'GET', '/api/sso/connections')
  t.same(list.json(), { items: [c] })

  const newSecret = 'Lm4nB7vC2xZ9kJ5hG8fD1sA6qW3eR0tY'
  const changed = await call(h, admin, 'PATCH', `/api/sso/connections/${c.id as string}`, {
    name: 'Okta (prod)', accounts: 'create', oidc: { clientSecret: newSecret }
  })
  t.equal(changed.statusCode, 200)
  t.match(changed.json(), { name: 'Okta (prod)', accounts: 'create', defaultRole: 'member', oidc: { clientId: '0oa1b2c3d4' } })
  t.notOk(changed.body.includes(newSecret))
  const resealed = (await h.db.query<{ sealed: string }>(
    'SELECT oidc_client_secret_enc AS sealed FROM sso_connections WHERE id = $1', [c.id])).rows[0]?.sealed ?? ''
  t.equal(openClientSecret(ssoKeyring(h.config), c.id, resealed), newSecret, 'the new secret replaced the old')

  const audits = [
    ...await auditOf(h, admin.workspaceId, 'sso_connection.created'),
    ...await auditOf(h, admin.workspaceId, 'sso_connection.updated')
  ]
  t.match(audits, [{ name: 'Okta', protocol: 'oidc', domains: ['acme-robotics.com'] }, { fields: ['name', 'accounts', 'oidc.clientSecret'] }])
  t.notOk(JSON.stringify(audits).includes(secret) || JSON.stringify(audits).includes(newSecret), 'no secret in the audit trail')

  t.equal((await call(h, admin, 'DELETE', `/api/sso/connections/${c.id as string}`)).statusCode, 204)
  t.equal((await call(h, admin, 'GET', `/api/sso/connections/${c.id as string}`)).statusCode, 404)
  t.equal((await call(h, admin, 'DELETE', `/api/sso/connections/${c.id as string}`)).statusCode, 404)
  t.match(await auditOf(h, admin.workspaceId, 'sso_connection.deleted'), [{ name: 'Okta (prod)', protocol: 'oidc' }])
})

t.test('SAML: metadata by URL or XML, certificates with fingerprint and expiry, SP endpoints per connection', async t => {
  const admin = await h.signIn()
  const created = await call(h, admin, 'POST', '/api/sso/connections', saml({ accounts: 'create', defaultRole: 'member' }))
  t.equal(created.statusCode, 201)
  const c = created.json()
  const x509 = new X509Certificate(PEM)
  const base = `http://localhost:3000/api/sso/connections/${c.id as string}/saml`
  t.match(c, {
    protocol: 'saml',
    oidc: null,
    accounts: 'create',
    defaultRole: 'member',
    saml: {
      idpMetadataUrl: METADATA_URL,
      idpMetadataXml: null,
      idpCertificates: [{ fingerprintSha256: x509.fingerprint256, notAfter: new Date(x509.validTo).toISOString() }],
      spEntityId: `${base}/metadata`,
      acsUrl: `${base}/acs`,
      spMetadataUrl: `${base}/metadata`
    }
  })
  const xml = '<?xml version="1.0"?><EntityDescriptor entityID="https://idp.acme.test"/>'
  const toXml = await call(h, admin, 'PATCH', `/api/sso/connections/${c.id as string}`, {
    saml: { idpMetadataXml: xml, idpEntityId: 'https://idp.acme.test', idpCertificates: [PEM, PEM.replace(/\n/g, '\r\n')] }
  })
  t.equal(toXml.statusCode, 200)
  t.match(toXml.json().saml, { idpMetadataUrl: null, idpMetadataXml: xml, idpEntityId: 'https://idp.acme.test' },
    'pasted XML replaces the URL')
  t.equal(toXml.json().saml.idpCertificates.length, 2, 'several certificates during a rotation')
  const other = await h.signIn()
  const second = await call(h, other, 'POST', '/api/sso/connections', saml())
  t.same(samlEndpoints(h.config.publicUrl, c.id), { spEntityId: `${base}/metadata`, acsUrl: `${base}/acs` },
    'what the SAML flow checks the audience and recipient against')
  t.not(second.json().saml.acsUrl, c.saml.acsUrl, 'each connection has its own ACS URL')

  const both = await call(h, admin, 'PATCH', `/api/sso/connections/${c.id as string}`, {
    saml: { idpMetadataXml: xml, idpMetadataUrl: 'https://idp.acme.test/metadata' }
  })
  t.equal(both.statusCode, 400)
  t.match(both.json(), { code: 'VALIDATION_FAILED', details: { errors: [{ in: 'body', field: 'saml' }] } })
  const neither = await call(h, admin, 'POST', '/api/sso/connections', saml({ saml: { idpCertificates: [PEM] } }))
  t.equal(neither.statusCode, 400, 'one of metadata URL and XML is needed')
  const cleared = await call(h, admin, 'PATCH', `/api/sso/connections/${c.id as string}`, { saml: { idpMetadataXml: null } })
  t.equal(cleared.statusCode, 400, 'clearing the only metadata is refused')
})

t.test('certificates that do not parse are 422 SSO_CERTIFICATE_INVALID, naming which', async t => {
  const admin = await h.signIn()
  const garbled = '-----BEGIN CERTIFICATE-----\nTm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----'
  const res = await call(h, admin, 'POST', '/api/sso/connections', saml({
    saml: { idpMetadataUrl: 'https://idp.acme.test/metadata', idpCertificates: [PEM, garbled] }
  }))
  t.equal(res.statusCode, 422)
  t.match(res.json(), {
    code: 'SSO_CERTIFICATE_INVALID', details: { in: 'body', field: 'saml.idpCertificates.1' }
  })
  const notPem = await call(h, admin, 'POST', '/api/sso/connections', saml({
    saml: { idpMetadataUrl: 'https://idp.acme.test/metadata', idpCertificates: ['MIIB…'] }
  }))
  t.equal(notPem.statusCode, 400, 'not PEM at all: the contract\'s pattern')
  const none = await call(h, admin, 'POST', '/api/sso/connections', saml({
    saml: { idpMetadataUrl: 'https://idp.acme.test/metadata', idpCertificates: [] }
  }))
  t.equal(none.statusCode, 400, 'at least one certificate')
  t.equal((await h.db.query('SELECT 1 FROM sso_connections WHERE workspace_id = $1', [admin.workspaceId])).rows.length, 0)
})

t.test('settings of the other protocol, or none of its own, are 400', async t => {
  const admin = await h.signIn()
  const missing = await call(h, admin, 'POST', '/api/sso/connections', { name: 'x', protocol: 'oidc' })
  t.match(missing.json(), { code: 'VALIDATION_FAILED', details: { errors: [{ field: 'oidc' }] } })
  const mixed = await call(h, admin, 'POST', '/api/sso/connections', oidc({ saml: { idpCertificates: [PEM], idpMetadataUrl: 'https://a.test/m' } }))
  t.match(mixed.json(), { code: 'VALIDATION_FAILED', details: { errors: [{ field: 'saml' }] } })
  const role = await call(h, admin, 'POST', '/api/sso/connections', oidc({ defaultRole: 'admin' }))
  t.match(role.json(), { code: 'VALIDATION_FAILED', details: { errors: [{ field: 'defaultRole' }] } }, 'a role only when accounts are created')
  const c = (await call(h, admin, 'POST', '/api/sso/connections', oidc())).json()
  const wrong = await call(h, admin, 'PATCH', `/api/sso/connections/${c.id as string}`, { saml: { idpCertificates: [PEM] } })
  t.match(wrong.json(), { code: 'VALIDATION_FAILED', details: { errors: [{ field: 'saml' }] } })
  const unknown = await call(h, admin, 'PATCH', `/api/sso/connections/${c.id as string}`, { protocol: 'saml' })
  t.equal(unknown.statusCode, 400, 'the protocol does not change')
})

t.test('domains: verified ones of the workspace only, each serving at most one connection', async t => {
  const admin = await h.signIn()
  const stranger = await h.signIn()
  await domain(h, admin.workspaceId, 'acme.example')
  await domain(h, admin.workspaceId, 'pending.example', 'pending')
  await domain(h, stranger.workspaceId, 'theirs.example')
  for (const name of ['pending.example', 'theirs.example', 'nowhere.example']) {
    const res = await call(h, admin, 'POST', '/api/sso/connections', oidc({ domains: [name] }))
    t.equal(res.statusCode, 422, `${name} refused`)
    t.match(res.json(), {
      code: 'SSO_DOMAIN_NOT_VERIFIED', message: new RegExp(name), details: { in: 'body', field: 'domains' }
    })
  }
  const first = (await call(h, admin, 'POST', '/api/sso/connections', oidc({ domains: ['ACME.example'] }))).json()
  t.same(first.domains, ['acme.example'], 'names are compared in lower case')
  const second = await call(h, admin, 'POST', '/api/sso/connections', saml({ domains: ['acme.example'] }))
  t.equal(second.statusCode, 409)
  t.match(second.json(), {
    code: 'SSO_DOMAIN_TAKEN', message: /acme\.example is served by another SSO connection \(Okta\)/, details: { field: 'domains' }
  })
  const free = (await call(h, admin, 'POST', '/api/sso/connections', saml())).json()
  t.equal((await call(h, admin, 'PATCH', `/api/sso/connections/${free.id as string}`, { domains: ['acme.example'] })).statusCode, 409)
  t.equal((await call(h, admin, 'PATCH', `/api/sso/connections/${first.id as string}`, { domains: ['acme.example'] })).statusCode, 200,
    'a connection keeps its own domain')
  t.same((await call(h, admin, 'PATCH', `/api/sso/connections/${first.id as string}`, { domains: [] })).json().domains, [])
  t.same((await call(h, admin, 'PATCH', `/api/sso/connections/${free.id as string}`, { domains: ['acme.example'] })).json().domains,
    ['acme.example'], 'free once the other let it go')
  // The domain removed: the connection serves it no more.
  const domains = (await call(h, admin, 'GET', '/api/domains')).json().items as Array<{ id: string, domain: string }>
  const acme = domains.find(d => d.domain === 'acme.example')
  t.equal((await call(h, admin, 'DELETE', `/api/domains/${acme?.id ?? ''}`)).statusCode, 204)
  t.same((await call(h, admin, 'GET', `/api/sso/connections/${free.id as string}`)).json().domains, [])
})

t.test('another workspace\'s connection is 404; members are 403', async t => {
  const admin = await h.signIn()
  const stranger = await h.signIn()
  const c = (await call(h, admin, 'POST', '/api/sso/connections', oidc())).json()
  const url = `/api/sso/connections/${c.id as string}`
  t.equal((await call(h, stranger, 'GET', url)).statusCode, 404)
  t.equal((await call(h, stranger, 'PATCH', url, { name: 'Mine' })).statusCode, 404)
  t.equal((await call(h, stranger, 'DELETE', url)).statusCode, 404)
  t.same((await call(h, stranger, 'GET', '/api/sso/connections')).json(), { items: [] })
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  t.equal((await call(h, member, 'GET', url)).statusCode, 403)
  t.equal((await call(h, member, 'POST', '/api/sso/connections', oidc())).statusCode, 403)
  t.equal((await call(h, admin, 'GET', url)).json().name, 'Okta', 'untouched')
})

t.test('API keys: sso:read reads, sso:write changes, members:admin for a connection that makes admins', async t => {
  const admin = await h.signIn()
  const reader = { key: (await createApiKey(h, admin, 'reader', ['sso:read'])).secret }
  const writer = { key: (await createApiKey(h, admin, 'writer', ['sso:write'])).secret }
  const owner = { key: (await createApiKey(h, admin, 'owner', ['sso:write', 'members:admin'])).secret }
  const others = { key: (await createApiKey(h, admin, 'others', ALL_SCOPES.filter(s => !s.startsWith('sso:')))).secret }
  const made = await call(h, writer, 'POST', '/api/sso/connections', oidc())
  t.equal(made.statusCode, 201)
  t.equal((await call(h, reader, 'GET', '/api/sso/connections')).json().items.length, 1)
  t.equal((await call(h, reader, 'GET', `/api/sso/connections/${made.json().id as string}`)).statusCode, 200)
  const refused = await call(h, reader, 'POST', '/api/sso/connections', oidc())
  t.match(refused.json(), { code: 'INSUFFICIENT_SCOPE', details: { missingScopes: ['sso:write'] } })
  t.match((await call(h, others, 'GET', '/api/sso/connections')).json(), { code: 'INSUFFICIENT_SCOPE' })
  const admins = oidc({ accounts: 'create', defaultRole: 'admin' })
  const noAdmin = await call(h, writer, 'POST', '/api/sso/connections', admins)
  t.equal(noAdmin.statusCode, 403)
  t.match(noAdmin.json(), { code: 'INSUFFICIENT_SCOPE', details: { missingScopes: ['members:admin'] } })
  t.equal((await call(h, owner, 'POST', '/api/sso/connections', admins)).statusCode, 201)
  const promote = await call(h, writer, 'PATCH', `/api/sso/connections/${made.json().id as string}`, {
    accounts: 'create', defaultRole: 'admin'
  })
  t.equal(promote.statusCode, 403, 'nor by a change')
  t.equal((await call(h, writer, 'DELETE', `/api/sso/connections/${made.json().id as string}`)).statusCode, 204)
})

t.test('Entra ID: the tenant pinned, never a multi-tenant issuer', async t => {
  const admin = await h.signIn()
  const entra = (issuer: string, tenantId?: string) => oidc({
    name: 'Entra ID', oidc: { issuer, clientId: 'c1', clientSecret: 's1', ...(tenantId !== undefined ? { tenantId } : {}) }
  })
  for (const [issuer, tenantId, field, why] of [
    ['https://login.microsoftonline.com/common/v2.0', TENANT, 'oidc.issuer', /multi-tenant issuer \(\/common\/\)/],
    ['https://login.microsoftonline.com/organizations/v2.0', TENANT, 'oidc.issuer', /organizations/],
    ['https://login.microsoftonline.com/consumers/v2.0', TENANT, 'oidc.issuer', /consumers/],
    ['https://login.microsoftonline.com/%7Btenantid%7D/v2.0', TENANT, 'oidc.issuer', /placeholder/],
    [`https://login.microsoftonline.com/${TENANT}/v2.0`, undefined, 'oidc.tenantId', /needs the tenant id/],
    [`https://login.microsoftonline.com/${TENANT}/v2.0`, '00000000-0000-4000-8000-000000000000', 'oidc.tenantId', /names tenant/]
  ] as const) {
    const res = await call(h, admin, 'POST', '/api/sso/connections', entra(issuer, tenantId))
    t.equal(res.statusCode, 422, `${issuer} (${tenantId ?? 'no tenant'}) refused`)
    t.match(res.json(), { code: 'SSO_ISSUER_NOT_ALLOWED', message: why, details: { in: 'body', field } })
  }
  const braces = await call(h, admin, 'POST', '/api/sso/connections', entra('https://login.microsoftonline.com/{tenantid}/v2.0', TENANT))
  t.equal(braces.statusCode, 400, 'the placeholder as Microsoft writes it is not even a URI (RFC 3986)')
  const ok = await call(h, admin, 'POST', '/api/sso/connections', entra(`https://login.microsoftonline.com/${TENANT.toUpperCase()}/v2.0`, TENANT))
  t.equal(ok.statusCode, 201)
  t.equal(ok.json().oidc.tenantId, TENANT)
  const moved = await call(h, admin, 'PATCH', `/api/sso/connections/${ok.json().id as string}`, { oidc: { tenantId: null } })
  t.equal(moved.statusCode, 422, 'the tenant cannot be dropped while the issuer is Entra\'s')
})

t.test('in local, plain http only to loopback', async t => {
  const admin = await h.signIn()
  const loopback = await call(h, admin, 'POST', '/api/sso/connections', oidc({
    oidc: { issuer: 'http://127.0.0.1:9999/realms/acme', clientId: 'c', clientSecret: 's' }
  }))
  t.equal(loopback.statusCode, 201)
  const lan = await call(h, admin, 'POST', '/api/sso/connections', saml({
    saml: { idpMetadataUrl: 'http://idp.acme.test/metadata', idpCertificates: [PEM] }
  }))
  t.equal(lan.statusCode, 422)
  t.match(lan.json(), { code: 'SSO_URL_NOT_ALLOWED', message: /https/, details: { field: 'saml.idpMetadataUrl' } })
})

t.test('staging: the webhooks\' address policy, and the hosts SSO_ALLOWED_HOSTS names', async t => {
  // What each name resolves to: a company's IdP on its network, the cloud metadata address, a public one.
  const dns = new Map([
    ['keycloak.corp.test', '10.0.0.5'], ['other.corp.test', '10.0.0.5'], ['metadata.test', '169.254.169.254'],
    ['idp.public.test', '93.184.216.34']
  ])
  const s = await buildStaging(t, dns, { SSO_ALLOWED_HOSTS: 'Keycloak.corp.test' })
  const admin = await s.signIn()
  const issuer = (url: string) => oidc({ oidc: { issuer: url, clientId: 'c', clientSecret: 's' } })
  for (const [url, why] of [
    ['http://idp.public.test', /https/],
    ['http://127.0.0.1:8080/realms/acme', /127\.0\.0\.1 is not a public address|https/],
    ['https://10.0.0.1/realms/acme', /10\.0\.0\.1 is not a public address/],
    ['https://metadata.test', /169\.254\.169\.254 is not a public address/],
    ['https://other.corp.test/realms/acme', /10\.0\.0\.5 is not a public address/],
    ['https://nowhere.test', /not found/]
  ] as const) {
    const res = await call(s, admin, 'POST', '/api/sso/connections', issuer(url))
    t.equal(res.statusCode, 422, `${url} refused`)
    t.match(res.json(), { code: 'SSO_URL_NOT_ALLOWED', message: why, details: { in: 'body', field: 'oidc.issuer' } })
  }
  const allowed = await call(s, admin, 'POST', '/api/sso/connections', issuer('https://keycloak.corp.test/realms/acme'))
  t.equal(allowed.statusCode, 201, 'a host the operator allows, on a private address')
  t.equal(allowed.json().oidc.redirectUri, 'https://workspace.example.com/api/oauth/sso/callback')
  t.equal((await call(s, admin, 'POST', '/api/sso/connections', issuer('http://keycloak.corp.test/realms/acme'))).statusCode, 422,
    'https still applies to it')
  t.equal((await call(s, admin, 'POST', '/api/sso/connections', issuer('https://idp.public.test'))).statusCode, 201)
  const metadata = await call(s, admin, 'POST', '/api/sso/connections', saml({
    saml: { idpMetadataUrl: 'https://metadata.test/saml', idpCertificates: [PEM] }
  }))
  t.match(metadata.json(), { code: 'SSO_URL_NOT_ALLOWED', details: { field: 'saml.idpMetadataUrl' } })
})

t.test('ENCRYPTION_KEY rotation re-seals client secrets (npm run secrets:reencrypt)', async t => {
  const admin = await h.signIn()
  const c = (await call(h, admin, 'POST', '/api/sso/connections', oidc())).json()
  const next = testConfig({ ENCRYPTION_KEY: randomBytes(32).toString('hex'), ENCRYPTION_KEY_PREVIOUS: ENCRYPTION_KEY })
  const count = await resealClientSecrets(h.db, next)
  t.match(count, { store: 'sso client secrets', unreadable: 0 })
  t.ok(count.rewritten >= 1, 'sealed again under the new key')
  const sealed = (await h.db.query<{ sealed: string }>(
    'SELECT oidc_client_secret_enc AS sealed FROM sso_connections WHERE id = $1', [c.id])).rows[0]?.sealed ?? ''
  t.equal(openClientSecret(ssoKeyring(next), c.id, sealed), 'Xq7vJ2kP9sL4mN8rT1wY5zB3cF6hD0gK')
  t.match(await resealClientSecrets(h.db, next), { rewritten: 0 }, 'a second run has nothing to do')
})

t.test('a deleted workspace takes its connections along; its principal is 401', async t => {
  const admin = await h.signIn()
  await domain(h, admin.workspaceId, 'gone.example')
  const c = (await call(h, admin, 'POST', '/api/sso/connections', oidc({ domains: ['gone.example'] }))).json()
  await h.db.query('DELETE FROM workspaces WHERE id = $1', [admin.workspaceId])
  t.equal((await h.db.query('SELECT 1 FROM sso_connections WHERE id = $1', [c.id])).rows.length, 0)
  t.equal((await h.db.query('SELECT 1 FROM sso_connection_domains WHERE connection_id = $1', [c.id])).rows.length, 0)
  const principal = principalOf(admin, 'admin')
  for (const call of [
    async () => await h.app.services.ssoConnections.get(principal, c.id),
    async () => await h.app.services.ssoConnections.create(principal, { name: 'x', protocol: 'oidc', oidc: { issuer: 'https://a.test', clientId: 'c', clientSecret: 's' } })
  ]) {
    t.match(await call().then(() => null, (e: unknown) => e), { statusCode: 401, code: 'UNAUTHENTICATED' })
  }
})

t.test('at once: ten connections claiming one domain leave it with one; changes at once all land', async t => {
  const admin = await h.signIn()
  await domain(h, admin.workspaceId, 'race.example')
  const answers = await Promise.all(Array.from({ length: 10 }, async (_, i) =>
    await call(h, admin, 'POST', '/api/sso/connections', oidc({ name: `IdP ${i}`, domains: ['race.example'] }))))
  t.same(answers.map(a => a.statusCode).sort(), [201, ...Array(9).fill(409)], 'one wins, the others are told')
  t.ok(answers.filter(a => a.statusCode === 409).every(a => a.json().code === 'SSO_DOMAIN_TAKEN'))
  t.equal((await h.db.query(
    `SELECT 1 FROM sso_connection_domains cd JOIN workspace_domains d ON d.id = cd.domain_id
      WHERE d.domain = 'race.example'`)).rows.length, 1)
  const c = answers.find(a => a.statusCode === 201)?.json()
  const url = `/api/sso/connections/${c.id as string}`
  const secret = 'Zz9yX8wV7uT6sR5qP4oN3mL2kJ1iH0gF'
  const [named, rotated] = await Promise.all([
    call(h, admin, 'PATCH', url, { name: 'Renamed' }),
    call(h, admin, 'PATCH', url, { oidc: { clientSecret: secret } })
  ])
  t.same([named?.statusCode, rotated?.statusCode], [200, 200])
  const after = (await call(h, admin, 'GET', url)).json()
  t.equal(after.name, 'Renamed', 'the name changed')
  const sealed = (await h.db.query<{ sealed: string }>(
    'SELECT oidc_client_secret_enc AS sealed FROM sso_connections WHERE id = $1', [c.id])).rows[0]?.sealed ?? ''
  t.equal(openClientSecret(ssoKeyring(h.config), c.id, sealed), secret, 'and the secret too: neither undid the other')
})
