import { X509Certificate } from 'node:crypto'
import { createRequire } from 'node:module'
import t, { type Test } from 'tap'
import { SignedXml } from 'xml-crypto'
import {
  finishSignIn, parseIdpMetadata, SamlError, spMetadata, startSignIn, type SamlConnection, type SamlErrorCode
} from '../../src/sso/saml.js'
import { createTestIdp, makeKeyPair, startTestIdp, type LoginResponseOptions } from '../helpers/saml-idp.js'

// The SAML service provider against a samlify IdP, then every forged Response we know of refused
// with its code and nothing remembered. Attacks are string or DOM edits of real signed responses,
// and signatures made with xml-crypto by a key the connection does not pin.

const SP = { entityId: 'https://app.example/sso/saml/c1', acsUrl: 'https://app.example/api/sso/saml/c1/acs' }
const EXPECTED = { spEntityId: SP.entityId, acsUrl: SP.acsUrl }
const IDP_ENTITY = 'https://idp.example/saml/metadata'
const SSO_URL = 'https://idp.example/saml/sso'
const ASSERTION_NS = 'urn:oasis:names:tc:SAML:2.0:assertion'
const PROTOCOL_NS = 'urn:oasis:names:tc:SAML:2.0:protocol'
const DSIG_NS = 'http://www.w3.org/2000/09/xmldsig#'

const [keys, nextKeys, attackerKeys] = await Promise.all([
  makeKeyPair(t, 'idp'), makeKeyPair(t, 'idp-next'), makeKeyPair(t, 'attacker')
])
const idp = createTestIdp({ entityId: IDP_ENTITY, keys, ssoUrl: SSO_URL })
const connection: SamlConnection = {
  idpEntityId: IDP_ENTITY, ssoRedirectUrl: SSO_URL, certificates: [keys.certificate]
}
const USER = { nameId: 'ada@corp.example', attributes: { email: 'ada@corp.example', displayName: 'Ada' } }

/** A replay store that answers as the database table will, and records what it was asked. */
function replayStore () {
  const seen = new Map<string, Date>()
  return {
    seen,
    rememberAssertion: async (id: string, until: Date) => {
      if (seen.has(id)) return false
      seen.set(id, until)
      return true
    }
  }
}

/** A request started by our SP and the IdP's answer to it (`options` change what the IdP says). */
async function signIn (options: Partial<LoginResponseOptions> = {}, signer = idp) {
  const started = await startSignIn(connection, { ...EXPECTED, now: new Date() })
  const response = await signer.loginResponse({ sp: SP, requestId: started.requestId, ...USER, ...options })
  return { requestId: started.requestId, response }
}

function finish (response: string, requestId: string, at = new Date(), store = replayStore(), on = connection) {
  return finishSignIn(on, response, { ...EXPECTED, requestId }, { now: at, ...store })
}

/** The response is refused with `code`, and no assertion was remembered. */
async function refused (
  t: Test, response: string, requestId: string, code: SamlErrorCode, at?: Date, on?: SamlConnection
) {
  const store = replayStore()
  const err = await finish(response, requestId, at, store, on).then(() => undefined, (e: unknown) => e)
  t.ok(err instanceof SamlError, 'a SamlError')
  t.equal((err as SamlError | undefined)?.code, code)
  t.equal(store.seen.size, 0, 'nothing remembered')
}

// The DOM members the attacks use; xmldom through require, as src/sso/saml-xml.ts says why.
interface Element {
  readonly namespaceURI: string | null
  readonly localName: string
  readonly childNodes: ArrayLike<Element>
  readonly firstChild: Element | null
  readonly nextSibling: Element | null
  textContent: string | null
  cloneNode: (deep: boolean) => Element
  removeChild: (child: Element) => Element
  appendChild: (child: Element) => Element
  insertBefore: (node: Element, before: Element | null) => Element
  replaceChild: (node: Element, old: Element) => Element
  getElementsByTagNameNS: (ns: string, localName: string) => ArrayLike<Element>
}
interface Document {
  readonly documentElement: Element
  createElementNS: (ns: string, qualifiedName: string) => Element
  getElementsByTagNameNS: (ns: string, localName: string) => ArrayLike<Element>
}
const { DOMParser, XMLSerializer } = createRequire(import.meta.url)('@xmldom/xmldom') as {
  DOMParser: new () => { parseFromString: (xml: string, mimeType: string) => Document }
  XMLSerializer: new () => { serializeToString: (node: Document) => string }
}

const decode = (b64: string) => Buffer.from(b64, 'base64').toString('utf8')
const encode = (xml: string) => Buffer.from(xml, 'utf8').toString('base64')

/** Edits the decoded Response as a DOM and encodes it again. */
function editDom (b64: string, edit: (doc: Document, assertion: Element) => void): string {
  const doc = new DOMParser().parseFromString(decode(b64), 'text/xml')
  const assertion = doc.getElementsByTagNameNS(ASSERTION_NS, 'Assertion')[0]
  if (assertion === undefined) throw new Error('no assertion')
  edit(doc, assertion)
  return encode(new XMLSerializer().serializeToString(doc))
}

const signatureOf = (element: Element) => Array.from(element.childNodes)
  .find(n => n.namespaceURI === DSIG_NS && n.localName === 'Signature') as Element

/** A copy of the signed assertion saying `nameId`, its signature gone: what an attacker would add. */
function evilCopy (doc: Document, assertion: Element, nameId = 'mallory@corp.example'): Element {
  const evil = assertion.cloneNode(true) as Element
  evil.removeChild(signatureOf(evil))
  const name = evil.getElementsByTagNameNS(ASSERTION_NS, 'NameID')[0]
  if (name === undefined) throw new Error('no NameID')
  name.textContent = nameId
  return evil
}

/** Signs the Response's assertion again with xml-crypto: `privateKey`, and `certificate` in KeyInfo if given. */
function resign (b64: string, privateKey: string, certificate?: string, algorithm = 'sha256'): string {
  const xml = editDom(b64, (_doc, assertion) => { assertion.removeChild(signatureOf(assertion)) })
  const assertionPath = "/*[local-name(.)='Response']/*[local-name(.)='Assertion']"
  const signer = new SignedXml({
    privateKey,
    ...(certificate === undefined ? {} : { publicCert: certificate }),
    signatureAlgorithm: algorithm === 'sha1'
      ? 'http://www.w3.org/2000/09/xmldsig#rsa-sha1'
      : 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#'
  })
  signer.addReference({
    xpath: assertionPath,
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
    digestAlgorithm: algorithm === 'sha1' ? 'http://www.w3.org/2000/09/xmldsig#sha1' : 'http://www.w3.org/2001/04/xmlenc#sha256'
  })
  signer.computeSignature(decode(xml), {
    prefix: 'ds', location: { reference: `${assertionPath}/*[local-name(.)='Issuer']`, action: 'after' }
  })
  return encode(signer.getSignedXml())
}

t.test('metadata: the IdP\'s read, ours readable by an IdP', async t => {
  const live = await startTestIdp(t, { entityId: IDP_ENTITY, keys, sp: SP, user: USER })
  const metadata = parseIdpMetadata(await (await fetch(`${live.url}/metadata`)).text())
  const certificate = new X509Certificate(keys.certificate)
  t.equal(metadata.entityId, IDP_ENTITY)
  t.equal(metadata.ssoRedirectUrl, `${live.url}/sso`)
  t.equal(metadata.certificates.length, 1)
  t.equal(metadata.certificates[0]?.fingerprint256, certificate.fingerprint256)
  t.equal(metadata.certificates[0]?.notAfter.getTime(), new Date(certificate.validTo).getTime())
  t.equal(new X509Certificate(metadata.certificates[0]?.pem ?? '').fingerprint256, certificate.fingerprint256)

  t.throws(() => parseIdpMetadata(`<!DOCTYPE x [<!ENTITY e "e">]>${live.metadata()}`), { code: 'doctype' })
  t.throws(() => parseIdpMetadata(live.metadata() + ' '.repeat(1024 * 1024)), { code: 'too_large' })
  t.throws(() => parseIdpMetadata('<EntityDescriptor/>'), { code: 'malformed' })

  const ours = spMetadata({ entityId: SP.entityId, acsUrl: SP.acsUrl })
  t.match(ours, `entityID="${SP.entityId}"`)
  t.match(ours, `Location="${SP.acsUrl}"`)
  t.match(ours, 'WantAssertionsSigned="true"')
})

t.test('the whole flow through the IdP\'s pages: redirect, login page, posted response', async t => {
  const live = await startTestIdp(t, { entityId: IDP_ENTITY, keys, sp: SP, user: USER })
  const metadata = parseIdpMetadata(live.metadata())
  const fromMetadata: SamlConnection = {
    idpEntityId: metadata.entityId,
    ssoRedirectUrl: metadata.ssoRedirectUrl,
    certificates: metadata.certificates.map(c => c.pem)
  }
  const now = new Date()
  const started = await startSignIn(fromMetadata, { ...EXPECTED, now })
  t.ok(started.url.startsWith(`${live.url}/sso?SAMLRequest=`), 'HTTP-Redirect binding to the IdP')
  t.equal(started.issuedAt, now)
  t.equal(await live.requestIdOf(started.url, SP), started.requestId, 'the IdP reads our request ID')
  const page = await (await fetch(started.url)).text()
  t.match(page, `action="${SP.acsUrl}"`)
  const posted = /name="SAMLResponse" value="([^"]+)"/.exec(page)?.[1] ?? ''
  const signedIn = await finishSignIn(fromMetadata, posted, { ...EXPECTED, requestId: started.requestId }, {
    now, rememberAssertion: replayStore().rememberAssertion
  })
  t.equal(signedIn.nameId, USER.nameId)
  t.equal(signedIn.email, USER.attributes.email)
})

t.test('accepted: assertion signed; Response and assertion signed; a rotated key pinned second', async t => {
  for (const sign of ['assertion', 'both'] as const) {
    const { requestId, response } = await signIn({ sign })
    const store = replayStore()
    const before = Date.now()
    const signedIn = await finish(response, requestId, new Date(), store)
    t.equal(signedIn.nameId, USER.nameId, sign)
    t.equal(signedIn.email, USER.attributes.email)
    t.equal(signedIn.issuer, IDP_ENTITY)
    t.same(signedIn.attributes, { email: [USER.attributes.email], displayName: ['Ada'] })
    t.ok(signedIn.notOnOrAfter.getTime() > before + 4 * 60_000, 'valid about 5 minutes')
    t.same([...store.seen.keys()], [signedIn.assertionId], 'the assertion ID remembered')
    t.equal(store.seen.get(signedIn.assertionId)?.getTime(), signedIn.notOnOrAfter.getTime() + 180_000,
      'until it could no longer be accepted')
  }
  const next = createTestIdp({ entityId: IDP_ENTITY, keys: nextKeys, ssoUrl: SSO_URL })
  const rotating = { ...connection, certificates: [keys.certificate, nextKeys.certificate] }
  const { requestId, response } = await signIn({}, next)
  t.equal((await finish(response, requestId, new Date(), replayStore(), rotating)).nameId, USER.nameId)
  await refused(t, response, requestId, 'wrong_certificate')
})

t.test('refused: no signature on the assertion', async t => {
  const { requestId, response } = await signIn()
  await refused(t, editDom(response, (_doc, assertion) => { assertion.removeChild(signatureOf(assertion)) }),
    requestId, 'unsigned')
  const signedEnvelopeOnly = await signIn({ sign: 'response' })
  await refused(t, signedEnvelopeOnly.response, signedEnvelopeOnly.requestId, 'unsigned')
})

t.test('refused: signed by a key the connection does not pin', async t => {
  const { requestId, response } = await signIn()
  await refused(t, resign(response, attackerKeys.privateKey), requestId, 'bad_signature')
  await refused(t, resign(response, attackerKeys.privateKey, attackerKeys.certificate), requestId, 'wrong_certificate')
  // KeyInfo naming the pinned certificate does not make the attacker's signature good.
  await refused(t, resign(response, attackerKeys.privateKey, keys.certificate), requestId, 'bad_signature')
  const attacker = createTestIdp({ entityId: IDP_ENTITY, keys: attackerKeys, ssoUrl: SSO_URL })
  const forged = await signIn({}, attacker)
  await refused(t, forged.response, forged.requestId, 'wrong_certificate')
  // Our own re-signing with the right key passes: the refusals above are the key's, not the tool's.
  t.equal((await finish(resign(response, keys.privateKey, keys.certificate), requestId)).nameId, USER.nameId)
})

t.test('refused: signature wrapping', async t => {
  const { requestId, response } = await signIn()
  await refused(t, editDom(response, (doc, assertion) => {
    doc.documentElement.insertBefore(evilCopy(doc, assertion), assertion)
  }), requestId, 'multiple_assertions')
  await refused(t, editDom(response, (doc, assertion) => {
    doc.documentElement.appendChild(evilCopy(doc, assertion))
  }), requestId, 'multiple_assertions')
  await refused(t, editDom(response, (doc, assertion) => {
    const object = doc.createElementNS(DSIG_NS, 'ds:Object')
    object.appendChild(evilCopy(doc, assertion))
    signatureOf(assertion).appendChild(object)
  }), requestId, 'multiple_assertions')
  // The signed assertion moved under Extensions, an unsigned one (same ID) in its place.
  await refused(t, editDom(response, (doc, assertion) => {
    const evil = evilCopy(doc, assertion)
    const extensions = doc.createElementNS(PROTOCOL_NS, 'samlp:Extensions')
    doc.documentElement.replaceChild(evil, assertion)
    extensions.appendChild(assertion)
    doc.documentElement.insertBefore(extensions, doc.documentElement.firstChild?.nextSibling ?? null)
  }), requestId, 'multiple_assertions')
  await refused(t, editDom(response, (doc, assertion) => {
    const extensions = doc.createElementNS(PROTOCOL_NS, 'samlp:Extensions')
    doc.documentElement.replaceChild(extensions, assertion)
    extensions.appendChild(assertion)
  }), requestId, 'misplaced_assertion')
  // Another element bearing the signed assertion's ID, under another of the names xml-crypto reads as one.
  const assertionId = /<saml:Assertion [^>]*\bID="([^"]+)"/.exec(decode(response))?.[1] ?? ''
  for (const name of ['ID', 'Id', 'id']) {
    await refused(t, encode(decode(response).replace('<samlp:Status>',
      `<samlp:Extensions ${name}="${assertionId}"/><samlp:Status>`)), requestId, 'bad_signature')
  }
  const both = await signIn({ sign: 'both' })
  // A Response signature that does not verify is refused, though the assertion's alone would do.
  await refused(t, editDom(both.response, doc => {
    const value = doc.getElementsByTagNameNS(DSIG_NS, 'SignatureValue')[0]
    if (value === undefined) throw new Error('no SignatureValue')
    value.textContent = Buffer.alloc(256, 7).toString('base64')
  }), both.requestId, 'bad_signature')
  await refused(t, editDom(both.response, (doc, assertion) => {
    const object = doc.createElementNS(DSIG_NS, 'ds:Object')
    object.appendChild(evilCopy(doc, assertion))
    signatureOf(doc.documentElement).appendChild(object)
  }), both.requestId, 'multiple_assertions')
})

t.test('a comment inside the NameID does not change who signs in', async t => {
  const { requestId, response } = await signIn({
    nameId: 'ada@corp.example.evil.example', attributes: { email: 'ada@corp.example.evil.example' }
  })
  const truncated = encode(decode(response)
    .replace('>ada@corp.example.evil.example<', '>ada@corp.example<!---->.evil.example<')
    .replaceAll('>ada@corp.example.evil.example</saml:AttributeValue>', '>ada@corp.example<!---->.evil.example</saml:AttributeValue>'))
  t.match(decode(truncated), '<!---->', 'the comment is in')
  const signedIn = await finish(truncated, requestId)
  t.equal(signedIn.nameId, 'ada@corp.example.evil.example')
  t.equal(signedIn.email, 'ada@corp.example.evil.example')
})

t.test('refused before parsing: DOCTYPE and entities, oversize, not base64', async t => {
  const { requestId, response } = await signIn()
  const xml = decode(response)
  await refused(t, encode(`<?xml version="1.0"?><!DOCTYPE r [<!ENTITY e "x">]>${xml}`), requestId, 'doctype')
  await refused(t, encode(xml.replace('<saml:Assertion', '<!DOCTYPE x><saml:Assertion')), requestId, 'doctype')
  await refused(t, encode(xml + ' '.repeat(200 * 1024)), requestId, 'too_large')
  await refused(t, 'not base64 at all!', requestId, 'malformed')
  await refused(t, encode('<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol">'), requestId, 'malformed')
})

t.test('refused: what the IdP signed is not for this connection, SP or request', async t => {
  const cases: Array<[Partial<LoginResponseOptions>, SamlErrorCode]> = [
    [{ tags: { Issuer: 'https://other-idp.example' } }, 'issuer_mismatch'],
    [{ tags: { Audience: 'https://other-sp.example' } }, 'audience_mismatch'],
    [{ tags: { SubjectRecipient: 'https://other-sp.example/acs' } }, 'recipient_mismatch'],
    [{ tags: { Destination: 'https://other-sp.example/acs' } }, 'destination_mismatch'],
    [{ requestId: '_another-request' }, 'in_response_to_mismatch'],
    [{ requestId: null }, 'unsolicited']
  ]
  for (const [options, code] of cases) {
    const { requestId, response } = await signIn(options)
    await refused(t, response, requestId, code)
  }
  // The envelope is unsigned: mending it leaves the signed claim, still refused.
  const wrongIssuer = await signIn({ tags: { Issuer: 'https://other-idp.example' } })
  await refused(t, encode(decode(wrongIssuer.response).replace(
    '<saml:Issuer>https://other-idp.example</saml:Issuer><samlp:Status>', `<saml:Issuer>${IDP_ENTITY}</saml:Issuer><samlp:Status>`
  )), wrongIssuer.requestId, 'issuer_mismatch')
  const other = await signIn({ requestId: '_another-request' })
  await refused(t, encode(decode(other.response).replace('InResponseTo="_another-request"', `InResponseTo="${other.requestId}"`)),
    other.requestId, 'in_response_to_mismatch')
  // And an edited envelope around a good assertion is refused too.
  const { requestId, response } = await signIn()
  await refused(t, encode(decode(response).replace(`Destination="${SP.acsUrl}"`, 'Destination="https://evil.example/acs"')),
    requestId, 'destination_mismatch')
  await refused(t, encode(decode(response).replace(`InResponseTo="${requestId}"`, '')), requestId, 'unsolicited')
  await refused(t, encode(decode(response).replace(/<samlp:StatusCode Value="[^"]+"/, '<samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Requester"')),
    requestId, 'status_not_success')
  await refused(t, editDom(response, doc => {
    doc.documentElement.appendChild(doc.createElementNS(ASSERTION_NS, 'saml:EncryptedAssertion'))
  }), requestId, 'encrypted_assertion')
})

t.test('time: skew of 180 s either way, no more', async t => {
  const issued = new Date(Date.now() - 60 * 60_000)
  const { requestId, response } = await signIn({ now: issued })
  const end = issued.getTime() + 5 * 60_000
  await refused(t, response, requestId, 'expired', new Date(end + 180_000))
  t.equal((await finish(response, requestId, new Date(end + 179_000))).nameId, USER.nameId, 'within skew')
  await refused(t, response, requestId, 'not_yet_valid', new Date(issued.getTime() - 181_000))
  t.equal((await finish(response, requestId, new Date(issued.getTime() - 179_000))).nameId, USER.nameId, 'early within skew')
})

t.test('refused: SHA-1 signatures and digests', async t => {
  const sha1Idp = createTestIdp({ entityId: IDP_ENTITY, keys, ssoUrl: SSO_URL, signatureAlgorithm: 'sha1' })
  const { requestId, response } = await signIn({}, sha1Idp)
  t.match(decode(response), 'xmldsig#rsa-sha1')
  await refused(t, response, requestId, 'sha1')
  const good = await signIn()
  await refused(t, resign(good.response, keys.privateKey, keys.certificate, 'sha1'), good.requestId, 'sha1')
})

t.test('refused: the same response twice (replay)', async t => {
  const { requestId, response } = await signIn()
  const store = replayStore()
  await finish(response, requestId, new Date(), store)
  const err = await finish(response, requestId, new Date(), store).catch((e: unknown) => e)
  t.equal((err as SamlError).code, 'replayed')
  t.equal(store.seen.size, 1)
})
