import { SamlError } from './saml-error.js'
import {
  NS, attribute, certificateBody, childElements, descendants, onlyChild, parseHardenedXml, textOf,
  type XmlElement
} from './saml-xml.js'

// The checks of a SAML Response made on our own, before and after its signatures are verified
// (saml-signature.ts), because node-saml 5.1 did not make them (tried against it: it accepts a DOCTYPE,
// SHA-1, any Issuer, Recipient and Destination, an unsolicited response under `ifPresent`, and the
// same response twice at once under `always`): the shape of the document (one assertion, where it
// belongs, none encrypted), the algorithms, the certificates a signature names, every signed claim.

const ALLOWED_SIGNATURE = new Set([
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512'
])
const ALLOWED_DIGEST = new Set([
  'http://www.w3.org/2001/04/xmlenc#sha256',
  'http://www.w3.org/2001/04/xmlenc#sha512'
])
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer'
const SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success'

/**
 * The assertion's ID; the pinned certificates in the order to try them (those a signature names
 * first); whether the Response carries a signature of its own (then it must verify too).
 */
export interface ResponseShape {
  /** The one assertion, in the document checked (its signature not yet verified). */
  assertion: XmlElement
  assertionId: string
  certificates: string[]
  responseSigned: boolean
}

/** Checks a Response (the document element) before any signature is verified; `pinned`: the connection's PEMs. */
export function checkResponseShape (
  response: XmlElement,
  pinned: readonly string[],
  expected: { idpEntityId: string, requestId: string, acsUrl: string }
): ResponseShape {
  if (response.namespaceURI !== NS.protocol || response.localName !== 'Response') throw new SamlError('malformed')
  const status = onlyChild(response, NS.protocol, 'Status')
  const code = status === undefined ? undefined : onlyChild(status, NS.protocol, 'StatusCode')
  if (code === undefined || attribute(code, 'Value') !== SUCCESS) throw new SamlError('status_not_success')
  if (descendants(response, NS.assertion, 'EncryptedAssertion').length > 0) throw new SamlError('encrypted_assertion')

  // Signature wrapping hides a second assertion beside, inside or above the signed one: any
  // assertion anywhere but the one, directly under the Response, is refused.
  const assertions = descendants(response, NS.assertion, 'Assertion')
  const assertion = assertions[0]
  if (assertions.length !== 1 || assertion === undefined) throw new SamlError('multiple_assertions')
  if (assertion.parentNode !== response) throw new SamlError('misplaced_assertion')
  if (childElements(assertion, NS.dsig, 'Signature').length !== 1) throw new SamlError('unsigned')
  checkAlgorithms(response)
  const named = checkNamedCertificates(response, pinned)

  // The envelope is not signed when only the assertion is; when present it must still agree.
  const issuer = onlyChild(response, NS.assertion, 'Issuer')
  if (issuer !== undefined && textOf(issuer) !== expected.idpEntityId) throw new SamlError('issuer_mismatch')
  const destination = attribute(response, 'Destination')
  if (destination !== undefined && destination !== expected.acsUrl) throw new SamlError('destination_mismatch')
  const inResponseTo = attribute(response, 'InResponseTo')
  if (inResponseTo === undefined || inResponseTo === '') throw new SamlError('unsolicited')
  if (inResponseTo !== expected.requestId) throw new SamlError('in_response_to_mismatch')
  const assertionId = attribute(assertion, 'ID')
  if (assertionId === undefined || assertionId === '') throw new SamlError('malformed')
  // Each pinned certificate tried costs a full verification: the one the signature names goes first.
  return {
    assertion,
    assertionId,
    certificates: [...named, ...pinned.filter(pem => !named.includes(pem))],
    responseSigned: childElements(response, NS.dsig, 'Signature').length > 0
  }
}

/** SHA-1 anywhere (signature or digest) is refused; any other algorithm outside the list too. */
function checkAlgorithms (root: XmlElement): void {
  const check = (localName: string, allowed: Set<string>) => {
    for (const method of descendants(root, NS.dsig, localName)) {
      const algorithm = attribute(method, 'Algorithm') ?? ''
      if (/sha1$/i.test(algorithm)) throw new SamlError('sha1')
      if (!allowed.has(algorithm)) throw new SamlError('bad_signature')
    }
  }
  check('SignatureMethod', ALLOWED_SIGNATURE)
  check('DigestMethod', ALLOWED_DIGEST)
}

/**
 * A certificate a signature carries in KeyInfo is never used (saml-signature.ts verifies with the
 * pinned ones only); one that is not pinned means another key signed, said as such to the admin.
 */
function checkNamedCertificates (root: XmlElement, pinned: readonly string[]): string[] {
  const known = new Map(pinned.map(pem => [certificateBody(pem), pem]))
  const named = new Set<string>()
  for (const signature of descendants(root, NS.dsig, 'Signature')) {
    for (const x509 of descendants(signature, NS.dsig, 'X509Certificate')) {
      const pem = known.get(certificateBody(textOf(x509)))
      if (pem === undefined) throw new SamlError('wrong_certificate')
      named.add(pem)
    }
  }
  return [...named]
}

/** The claims of a signed assertion, read from the signed bytes only. */
export interface AssertionClaims {
  id: string
  issuer: string
  nameId: string
  nameIdFormat: string | undefined
  audiences: string[][]
  recipient: string | undefined
  inResponseTo: string | undefined
  notBefore: number[]
  notOnOrAfter: number[]
  attributes: Record<string, string[]>
}

/** Reads the assertion from its signed bytes (canonical XML, comments gone: saml-signature.ts). */
export function readSignedAssertion (signedXml: string): AssertionClaims {
  return claimsOf(parseHardenedXml(signedXml))
}

/**
 * Reads the one assertion of a Response from the Response's signed bytes: its signature covers the
 * whole answer, the assertion (and the assertion's own signature) with it, so what was verified
 * once is read, as readSignedAssertion reads an assertion's own signed bytes.
 */
export function readAssertionOfSignedResponse (signedXml: string): AssertionClaims {
  const response = parseHardenedXml(signedXml)
  if (response.namespaceURI !== NS.protocol || response.localName !== 'Response') throw new SamlError('malformed')
  const assertions = descendants(response, NS.assertion, 'Assertion')
  const assertion = assertions[0]
  if (assertions.length !== 1 || assertion === undefined || assertion.parentNode !== response) {
    throw new SamlError('misplaced_assertion')
  }
  return claimsOf(assertion)
}

function claimsOf (assertion: XmlElement): AssertionClaims {
  if (assertion.namespaceURI !== NS.assertion || assertion.localName !== 'Assertion') throw new SamlError('malformed')
  const required = (element: XmlElement | undefined) => {
    if (element === undefined) throw new SamlError('malformed')
    return element
  }
  const subject = required(onlyChild(assertion, NS.assertion, 'Subject'))
  if (onlyChild(subject, NS.assertion, 'EncryptedID') !== undefined) throw new SamlError('encrypted_assertion')
  const nameId = required(onlyChild(subject, NS.assertion, 'NameID'))
  const bearers = childElements(subject, NS.assertion, 'SubjectConfirmation')
    .filter(confirmation => attribute(confirmation, 'Method') === BEARER)
  if (bearers.length !== 1) throw new SamlError('malformed')
  const data = required(onlyChild(required(bearers[0]), NS.assertion, 'SubjectConfirmationData'))
  const conditions = required(onlyChild(assertion, NS.assertion, 'Conditions'))
  // The bearer confirmation must bound the assertion's life (SAML profiles §4.1.4.2).
  if (attribute(data, 'NotOnOrAfter') === undefined) throw new SamlError('malformed')
  // Required by SAML core §2.3.3 (node-saml refused an assertion without one, too).
  instant(attribute(assertion, 'IssueInstant') ?? '')

  return {
    id: attribute(assertion, 'ID') ?? '',
    issuer: textOf(required(onlyChild(assertion, NS.assertion, 'Issuer'))),
    nameId: textOf(nameId),
    nameIdFormat: attribute(nameId, 'Format'),
    audiences: childElements(conditions, NS.assertion, 'AudienceRestriction')
      .map(restriction => childElements(restriction, NS.assertion, 'Audience').map(textOf)),
    recipient: attribute(data, 'Recipient'),
    inResponseTo: attribute(data, 'InResponseTo'),
    notBefore: [attribute(conditions, 'NotBefore'), attribute(data, 'NotBefore')].flatMap(instant),
    notOnOrAfter: [attribute(conditions, 'NotOnOrAfter'), attribute(data, 'NotOnOrAfter')].flatMap(instant),
    attributes: readAttributes(assertion)
  }
}

function instant (value: string | undefined): number[] {
  if (value === undefined) return []
  const ms = Date.parse(value)
  if (!/^\d{4}-\d\d-\d\dT/.test(value) || Number.isNaN(ms)) throw new SamlError('malformed')
  return [ms]
}

function readAttributes (assertion: XmlElement): Record<string, string[]> {
  const entries: Array<[string, string[]]> = []
  for (const statement of childElements(assertion, NS.assertion, 'AttributeStatement')) {
    for (const attr of childElements(statement, NS.assertion, 'Attribute')) {
      const name = attribute(attr, 'Name')
      if (name === undefined || name === '') continue
      entries.push([name, childElements(attr, NS.assertion, 'AttributeValue').map(textOf)])
    }
  }
  // Object.fromEntries defines own properties: a `__proto__` attribute name stays a plain key.
  return Object.fromEntries(entries)
}
