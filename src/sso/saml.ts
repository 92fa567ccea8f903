import { randomBytes } from 'node:crypto'
import { SAML, ValidateInResponseTo } from '@node-saml/node-saml'
import { SamlError } from './saml-error.js'
import { type AssertionClaims, checkResponseShape, readSignedAssertion } from './saml-response.js'
import { parseHardenedXml } from './saml-xml.js'

// The service-provider side of SAML 2.0 sign-in for one connection, on @node-saml/node-saml 5:
// the AuthnRequest (HTTP-Redirect) and the checks of the Response posted back to the ACS URL.
// Pure of HTTP and storage: the caller stores the request ID bound to the browser and the
// connection, and passes the replay store in. node-saml verifies the assertion's signature with
// the pinned certificates; every other check is ours (saml-response.ts says why), made on the
// document before node-saml sees it and on the signed bytes it returns.

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

function serviceProvider (
  connection: SamlConnection,
  sp: SpEndpoints,
  { requestId, certificates = connection.certificates, responseSigned = false }: {
    requestId?: string, certificates?: readonly string[], responseSigned?: boolean
  } = {}
): SAML {
  return new SAML({
    entryPoint: connection.ssoRedirectUrl,
    issuer: sp.spEntityId,
    callbackUrl: sp.acsUrl,
    idpCert: [...certificates],
    wantAssertionsSigned: true,
    // An IdP that signs only the assertion is accepted; the assertion always must be. A Response
    // signature that is there must verify too (node-saml would otherwise ignore a broken one).
    wantAuthnResponseSigned: responseSigned,
    // node-saml reads the wall clock and keeps request IDs in a non-atomic cache: both are ours.
    acceptedClockSkewMs: -1,
    validateInResponseTo: ValidateInResponseTo.never,
    audience: false,
    identifierFormat: null,
    // A requested AuthnContext makes Entra ID refuse passwordless and MFA sign-ins (AADSTS75011).
    disableRequestedAuthnContext: true,
    ...(requestId === undefined ? {} : { generateUniqueId: () => requestId })
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
  const url = await serviceProvider(connection, { spEntityId, acsUrl }, { requestId })
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
  const xml = Buffer.from(samlResponseBase64, 'base64').toString('utf8')
  const shape = checkResponseShape(parseHardenedXml(xml), connection.certificates, {
    idpEntityId: connection.idpEntityId, requestId: expected.requestId, acsUrl: expected.acsUrl
  })

  let signedXml: string
  try {
    const { certificates, responseSigned } = shape
    const { profile } = await serviceProvider(connection, expected, { certificates, responseSigned })
      .validatePostResponseAsync({ SAMLResponse: samlResponseBase64 })
    if (profile === null) throw new Error('no profile')
    signedXml = profile.getAssertionXml?.() ?? ''
  } catch (err) {
    throw new SamlError('bad_signature', { cause: err })
  }
  const claims = readSignedAssertion(signedXml)
  // The bytes node-saml verified must be the one assertion of the document we checked.
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
