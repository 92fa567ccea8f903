import { randomBytes } from 'node:crypto'
import { SAML, ValidateInResponseTo } from '@node-saml/node-saml'
import { SamlError } from './saml-error.js'
import {
  type AssertionClaims, checkResponseShape, readAssertionOfSignedResponse, readSignedAssertion
} from './saml-response.js'
import { verifyEnvelopedSignature } from './saml-signature.js'
import { parseHardenedXml } from './saml-xml.js'

// The service-provider side of SAML 2.0 sign-in for one connection: the AuthnRequest
// (HTTP-Redirect, made by @node-saml/node-saml 5, as is our SP metadata) and the checks of the
// Response posted back to the ACS URL. Pure of HTTP and storage: the caller stores the request ID
// bound to the browser and the connection, and passes the replay store in.
//
// A Response is parsed once (hardened, saml-xml.ts), its shape checked (saml-response.ts), its
// signature verified with xml-crypto against the pinned certificates (saml-signature.ts: the
// Response's when there is one — it covers the assertion and the assertion's own signature — else
// the assertion's), and the claims read from the signed bytes alone. Verifying both signatures of a
// Response signed twice (Okta's default) cost 6.1–6.9 ms against the 5 ms target, for nothing the
// Response's verified bytes do not already prove; one costs what an assertion-signed one does.
// node-saml's validatePostResponseAsync did the signature step until issue 53's CPU target (5 ms a
// Response): it parses the document five times (its DOM, xml-crypto's re-parse
// per signature, the signed bytes again, xml2js for its profile), finds IDs with XPath over the
// whole document per signature and per ID attribute name, and verifies a Response signature
// whenever one is there — 6 ms (assertion signed) and 10–12 ms (both) here, of which our checks
// were under 1 ms. Every rule of its getVerifiedXml is kept in saml-signature.ts; what its profile
// step checked is ours already or switched off (clock, InResponseTo, audience: see saml-response.ts).
// node-saml stays for the AuthnRequest and the metadata, where it costs nothing per sign-in.

export { SamlError, type SamlErrorCode } from './saml-error.js'
export { parseIdpMetadata, spMetadata } from './saml-metadata.js'

/** The base64 SAMLResponse a browser may post: 256 KiB, far above any real IdP's answer. */
const MAX_RESPONSE_BASE64 = 256 * 1024
/** Clock skew accepted either way on NotBefore / NotOnOrAfter. */
const SKEW_MS = 180_000

/** What a SAML connection pins: the IdP's entity ID, its redirect endpoint, its signing certificates. */
export interface SamlConnection {
  idpEntityId: string
  ssoRedirectUrl: string
  /** PEM; several while the IdP rotates its key. */
  certificates: readonly string[]
}

interface SpEndpoints {
  spEntityId: string
  acsUrl: string
}

/** node-saml for the AuthnRequest: the connection's IdP endpoint, our entity ID and ACS URL. */
function serviceProvider (connection: SamlConnection, sp: SpEndpoints, requestId: string): SAML {
  return new SAML({
    entryPoint: connection.ssoRedirectUrl,
    issuer: sp.spEntityId,
    callbackUrl: sp.acsUrl,
    // Required by node-saml's constructor; Responses are verified by finishSignIn, not by node-saml.
    idpCert: [...connection.certificates],
    wantAssertionsSigned: true,
    identifierFormat: null,
    // node-saml would keep every request ID in its own memory cache: the caller stores ours.
    validateInResponseTo: ValidateInResponseTo.never,
    // A requested AuthnContext makes Entra ID refuse passwordless and MFA sign-ins (AADSTS75011).
    disableRequestedAuthnContext: true,
    generateUniqueId: () => requestId
  })
}

/**
 * Starts a sign-in: the IdP URL to redirect the browser to, and the request ID to bind to it.
 * `issuedAt` is `now`, for the caller's expiry of the stored request; the AuthnRequest's own
 * IssueInstant is node-saml's wall clock (no IdP we know checks it beyond minutes).
 */
export async function startSignIn (
  connection: SamlConnection,
  { spEntityId, acsUrl, now }: SpEndpoints & { now: Date }
): Promise<{ url: string, requestId: string, issuedAt: Date }> {
  // An xs:ID must not start with a digit.
  const requestId = `_${randomBytes(20).toString('hex')}`
  const url = await serviceProvider(connection, { spEntityId, acsUrl }, requestId)
    .getAuthorizeUrlAsync('', undefined, {})
  return { url, requestId, issuedAt: now }
}

export interface SignedInIdentity {
  assertionId: string
  notOnOrAfter: Date
  nameId: string
  email: string | null
  attributes: Record<string, string[]>
  issuer: string
}

/**
 * Checks a posted SAMLResponse against the request the caller stored and returns who signed in.
 * `rememberAssertion` records the assertion ID until it could no longer be accepted and answers
 * false when it was already recorded (atomic, e.g. a unique key in the database). Throws SamlError.
 */
export async function finishSignIn (
  connection: SamlConnection,
  samlResponseBase64: string,
  expected: { requestId: string } & SpEndpoints,
  { now, rememberAssertion }: {
    now: Date
    rememberAssertion: (assertionId: string, notOnOrAfter: Date) => Promise<boolean>
  }
): Promise<SignedInIdentity> {
  if (samlResponseBase64.length > MAX_RESPONSE_BASE64) throw new SamlError('too_large')
  if (!/^[A-Za-z0-9+/=\r\n]+$/.test(samlResponseBase64)) throw new SamlError('malformed')
  // Line ends normalized as an XML processor does (XML 1.0 §2.11), before our parse and
  // xml-crypto's: both read the same text.
  const xml = Buffer.from(samlResponseBase64, 'base64').toString('utf8').replace(/\r\n?/g, '\n')
  const response = parseHardenedXml(xml)
  const shape = checkResponseShape(response, connection.certificates, {
    idpEntityId: connection.idpEntityId, requestId: expected.requestId, acsUrl: expected.acsUrl
  })
  // A Response signature that is there must verify. It covers the whole answer — the assertion
  // and the assertion's own signature (whose presence checkResponseShape required) with it — so
  // once it verifies against a pinned certificate the assertion is read from those signed bytes,
  // and not verified a second time: the IdP's key vouched for every byte of it already. Else the
  // assertion's own signature is verified and its bytes read.
  const claims = shape.responseSigned
    ? readAssertionOfSignedResponse(verifyEnvelopedSignature(xml, response, shape.certificates))
    : readSignedAssertion(verifyEnvelopedSignature(xml, shape.assertion, shape.certificates))
  // The bytes verified must be the one assertion of the document we checked.
  if (claims.id !== shape.assertionId) throw new SamlError('misplaced_assertion')
  const until = checkClaims(claims, connection, expected, now.getTime())

  if (!await rememberAssertion(claims.id, new Date(until + SKEW_MS))) throw new SamlError('replayed')
  return {
    assertionId: claims.id,
    notOnOrAfter: new Date(until),
    nameId: claims.nameId,
    email: emailOf(claims),
    attributes: claims.attributes,
    issuer: claims.issuer
  }
}

/** Checks the signed claims; returns the instant the assertion stops being valid (before skew). */
function checkClaims (
  claims: AssertionClaims,
  connection: SamlConnection,
  expected: { requestId: string } & SpEndpoints,
  nowMs: number
): number {
  if (claims.issuer !== connection.idpEntityId) throw new SamlError('issuer_mismatch')
  // Every AudienceRestriction must name us (SAML core §2.5.1.4); at least one must be there.
  if (claims.audiences.length === 0 ||
    claims.audiences.some(audiences => !audiences.includes(expected.spEntityId))) {
    throw new SamlError('audience_mismatch')
  }
  if (claims.recipient !== expected.acsUrl) throw new SamlError('recipient_mismatch')
  if (claims.inResponseTo === undefined || claims.inResponseTo === '') throw new SamlError('unsolicited')
  if (claims.inResponseTo !== expected.requestId) throw new SamlError('in_response_to_mismatch')
  if (claims.notBefore.some(notBefore => nowMs + SKEW_MS < notBefore)) throw new SamlError('not_yet_valid')
  const until = Math.min(...claims.notOnOrAfter)
  if (nowMs - SKEW_MS >= until) throw new SamlError('expired')
  if (claims.nameId === '') throw new SamlError('malformed')
  return until
}

const EMAIL_ATTRIBUTES = [
  'email', 'mail', 'emailaddress',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
  'urn:oid:0.9.2342.19200300.100.1.3'
]
const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress'

/** The address the IdP states: an e-mail attribute, else a NameID of the e-mail format. Not yet trusted. */
function emailOf (claims: AssertionClaims): string | null {
  for (const name of EMAIL_ATTRIBUTES) {
    const value = claims.attributes[name]?.[0]
    if (value !== undefined && value !== '') return value
  }
  return claims.nameIdFormat === EMAIL_FORMAT ? claims.nameId : null
}
