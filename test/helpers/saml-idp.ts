import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { IdentityProvider } from 'samlify/types/src/entity-idp.js'
import type { ServiceProvider } from 'samlify/types/src/entity-sp.js'
import type { IdentityProviderSettings, ServiceProviderSettings } from 'samlify/types/src/types.js'
import { escapeHtml } from '../../src/lib/html.js'

// A SAML identity provider for tests, on samlify (as an IdP only): it reads our AuthnRequest,
// answers with a Response signed as a real IdP signs it (the assertion, or the Response too), and
// serves its metadata and a login page on loopback. Keys and certificates are made at test start
// (openssl, 2 days): a committed certificate ages past its validity and breaks the suite later.
// Times are the caller's (`now`), so expiry is tested without waiting.

// samlify's index typings import @xmldom/xmldom's, which declare the browser's DOM for the whole
// program (src/sso/saml-xml.ts says more): it is loaded through require, typed by its entity files.
const samlify = createRequire(import.meta.url)('samlify') as {
  IdentityProvider: (settings: IdentityProviderSettings) => IdentityProvider
  ServiceProvider: (settings: ServiceProviderSettings) => ServiceProvider
  setSchemaValidator: (validator: { validate: (xml: string) => Promise<unknown> }) => void
  SamlLib: { replaceTagsByValue: (xml: string, tags: Record<string, string>) => string }
}

// samlify refuses to parse without a schema validator; the messages it reads here are ours.
samlify.setSchemaValidator({ validate: async () => 'skipped' })

const BINDING = {
  redirect: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect',
  post: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST'
}
const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress'
const RSA_SHA1 = 'http://www.w3.org/2000/09/xmldsig#rsa-sha1'

interface Teardown { teardown: (fn: () => unknown) => void }

export interface KeyPair { privateKey: string, certificate: string }

/** An RSA key and a self-signed certificate valid `days` (2), made by openssl in a fresh directory. */
export async function makeKeyPair (t: Teardown, subject = 'test-idp', days = 2): Promise<KeyPair> {
  const dir = mkdtempSync(join(tmpdir(), 'saml-key-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  await promisify(execFile)('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', String(days), '-subj', `/CN=${subject}`,
    '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')
  ])
  return {
    privateKey: readFileSync(join(dir, 'key.pem'), 'utf8'),
    certificate: readFileSync(join(dir, 'cert.pem'), 'utf8')
  }
}

export interface ServiceProviderRef { entityId: string, acsUrl: string }

export interface LoginResponseOptions {
  sp: ServiceProviderRef
  /** The AuthnRequest's ID; null for an IdP-initiated (unsolicited) response. */
  requestId: string | null
  nameId: string
  attributes?: Record<string, string>
  now?: Date
  /** What the IdP signs: the assertion (default), or the Response as well, or the Response only. */
  sign?: 'assertion' | 'both' | 'response'
  /** Values put into the Response in place of the right ones (a misconfigured or hostile IdP). */
  tags?: Partial<Record<'Issuer' | 'Audience' | 'SubjectRecipient' | 'Destination', string>>
}

export interface TestIdp {
  entityId: string
  certificate: string
  /** The IdP's metadata (SSO endpoint: `ssoUrl`). */
  metadata: () => string
  /** The AuthnRequest ID in an HTTP-Redirect URL our SP made, as samlify reads it. */
  requestIdOf: (redirectUrl: string, sp: ServiceProviderRef) => Promise<string>
  /** A base64 SAMLResponse, as the browser would post it to the ACS URL. */
  loginResponse: (options: LoginResponseOptions) => Promise<string>
}

/** An in-process IdP signing with `keys`; `ssoUrl` is what its metadata names. */
export function createTestIdp (options: {
  entityId: string, keys: KeyPair, ssoUrl: string, signatureAlgorithm?: 'sha256' | 'sha1'
}): TestIdp {
  const idp = samlify.IdentityProvider({
    entityID: options.entityId,
    privateKey: options.keys.privateKey,
    signingCert: options.keys.certificate,
    nameIDFormat: [EMAIL_FORMAT],
    singleSignOnService: [{ Binding: BINDING.redirect, Location: options.ssoUrl }],
    ...(options.signatureAlgorithm === 'sha1' ? { requestSignatureAlgorithm: RSA_SHA1 } : {})
  })
  const serviceProvider = (sp: ServiceProviderRef, sign: LoginResponseOptions['sign']) => samlify.ServiceProvider({
    entityID: sp.entityId,
    assertionConsumerService: [{ Binding: BINDING.post, Location: sp.acsUrl }],
    wantAssertionsSigned: sign !== 'response',
    wantMessageSigned: sign !== 'assertion'
  })
  return {
    entityId: options.entityId,
    certificate: options.keys.certificate,
    metadata: () => idp.getMetadata(),
    async requestIdOf (redirectUrl, sp) {
      const query = Object.fromEntries(new URL(redirectUrl).searchParams)
      const parsed = await idp.parseLoginRequest(serviceProvider(sp, 'assertion'), 'redirect', { query })
      return String(parsed.extract.request?.id ?? '')
    },
    async loginResponse (response) {
      const sp = serviceProvider(response.sp, response.sign ?? 'assertion')
      const context = (template: string) => ({ id: '', context: fillTemplate(template, options.entityId, response) })
      const answer = await idp.createLoginResponse(sp, { extract: {} }, 'post', {}, { customTagReplacement: context })
      return answer.context
    }
  }
}

/** samlify's Response template filled with our values and clock (samlify's own uses the wall clock). */
function fillTemplate (template: string, idpEntityId: string, options: LoginResponseOptions): string {
  const now = options.now ?? new Date()
  const later = new Date(now.getTime() + 5 * 60_000).toISOString()
  const id = () => `_${Math.random().toString(16).slice(2)}${Math.random().toString(16).slice(2)}`
  let xml = template
  if (options.requestId === null) xml = xml.replaceAll(' InResponseTo="{InResponseTo}"', '')
  const attributes = Object.entries(options.attributes ?? {}).map(([name, value]) =>
    `<saml:Attribute Name="${escapeHtml(name)}"><saml:AttributeValue>${escapeHtml(value)}</saml:AttributeValue></saml:Attribute>`
  ).join('')
  xml = xml.replace('{AttributeStatement}', attributes === '' ? '' : `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>`)
  return samlify.SamlLib.replaceTagsByValue(xml, {
    ID: id(),
    AssertionID: id(),
    Destination: options.sp.acsUrl,
    Audience: options.sp.entityId,
    SubjectRecipient: options.sp.acsUrl,
    Issuer: idpEntityId,
    IssueInstant: now.toISOString(),
    StatusCode: 'urn:oasis:names:tc:SAML:2.0:status:Success',
    ConditionsNotBefore: now.toISOString(),
    ConditionsNotOnOrAfter: later,
    SubjectConfirmationDataNotOnOrAfter: later,
    NameIDFormat: EMAIL_FORMAT,
    NameID: options.nameId,
    InResponseTo: options.requestId ?? '',
    AuthnStatement: '',
    ...options.tags
  })
}

/**
 * The test IdP on loopback: GET /metadata, and GET /sso (the HTTP-Redirect endpoint) answering
 * with the page a browser posts to the ACS URL, signed in as `user`. `sp` may be given as a
 * function, read at each request: a connection's ACS URL holds its id, made after the IdP's
 * metadata (which holds the IdP's port) was given to it.
 */
export async function startTestIdp (t: Teardown, options: {
  entityId: string
  keys: KeyPair
  sp: ServiceProviderRef | (() => ServiceProviderRef)
  user: { nameId: string, attributes?: Record<string, string> }
}): Promise<TestIdp & { url: string }> {
  const spOf = (): ServiceProviderRef => typeof options.sp === 'function' ? options.sp() : options.sp
  // The IdP's SSO URL holds the port: it is made once the server listens.
  const started: { idp?: TestIdp } = {}
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://idp.test')
    const answer = async () => {
      const idp = started.idp
      if (idp === undefined) throw new Error('not started')
      if (url.pathname === '/metadata') return { type: 'application/samlmetadata+xml', body: idp.metadata() }
      if (url.pathname !== '/sso') return undefined
      const sp = spOf()
      const requestId = await idp.requestIdOf(url.href, sp)
      const samlResponse = await idp.loginResponse({ sp, requestId, ...options.user })
      return { type: 'text/html; charset=utf-8', body: postPage(sp.acsUrl, samlResponse) }
    }
    answer().then(found => {
      res.writeHead(found === undefined ? 404 : 200, { 'content-type': found?.type ?? 'text/plain' })
      res.end(found?.body ?? 'not found')
    }, () => { res.writeHead(400).end('bad request') })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise(resolve => server.close(resolve)))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const idp = createTestIdp({ entityId: options.entityId, keys: options.keys, ssoUrl: `${base}/sso` })
  started.idp = idp
  return { ...idp, url: base }
}

/** The HTTP-POST binding: a form the browser submits to the ACS URL (a button; no script needed). */
function postPage (acsUrl: string, samlResponse: string): string {
  return `<!doctype html><title>Test IdP</title><form method="post" action="${escapeHtml(acsUrl)}">` +
    `<input type="hidden" name="SAMLResponse" value="${escapeHtml(samlResponse)}">` +
    '<button type="submit">Continue</button></form>'
}
