import { generateServiceProviderMetadata } from '@node-saml/node-saml'
import { SamlError } from './saml-error.js'
import {
  NS, attribute, certificatePem, childElements, descendants, parseHardenedXml, textOf, type XmlElement
} from './saml-xml.js'

// The two metadata documents of a SAML connection: the IdP's, pasted by an admin or fetched from
// its URL (saml-metadata-fetch.ts), read for its entity ID, redirect endpoint and signing
// certificates; and ours, for the admin to paste into the IdP. A large federation aggregate is not
// a connection's metadata. The certificates it lists are read, never trusted: only the
// connection's own `idpCertificates` verify a response.

/** The largest IdP metadata read (characters pasted, bytes fetched). */
export const MAX_METADATA_CHARS = 1024 * 1024
const REDIRECT_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect'

interface IdpCertificate {
  pem: string
  notAfter: Date
  fingerprint256: string
}

/** What a connection takes from its IdP's metadata where it does not set them itself. */
export interface IdpEndpoints {
  entityId: string
  ssoRedirectUrl: string
}

interface IdpMetadata extends IdpEndpoints {
  certificates: IdpCertificate[]
}

/** Reads an IdP's metadata: exactly one IdP entity, its HTTP-Redirect SSO endpoint, its signing certificates. */
export function parseIdpMetadata (xml: string): IdpMetadata {
  if (xml.length > MAX_METADATA_CHARS) throw new SamlError('too_large')
  const idps = descendants(parseHardenedXml(xml), NS.metadata, 'IDPSSODescriptor')
  const descriptor = idps[0]
  const entity = descriptor?.parentNode as XmlElement | null | undefined
  if (idps.length !== 1 || descriptor === undefined || entity == null ||
    entity.namespaceURI !== NS.metadata || entity.localName !== 'EntityDescriptor') {
    throw new SamlError('malformed')
  }
  const entityId = attribute(entity, 'entityID')
  if (entityId === undefined || entityId === '') throw new SamlError('malformed')

  const redirect = childElements(descriptor, NS.metadata, 'SingleSignOnService')
    .find(service => attribute(service, 'Binding') === REDIRECT_BINDING)
  const ssoRedirectUrl = redirect === undefined ? undefined : attribute(redirect, 'Location')
  if (ssoRedirectUrl === undefined || !/^https?:\/\//.test(ssoRedirectUrl)) throw new SamlError('no_sso_redirect')

  const certificates = new Map<string, IdpCertificate>()
  for (const key of childElements(descriptor, NS.metadata, 'KeyDescriptor')) {
    const use = attribute(key, 'use')
    if (use !== undefined && use !== 'signing') continue
    for (const x509 of descendants(key, NS.dsig, 'X509Certificate')) {
      certificates.set(...readCertificate(textOf(x509)))
    }
  }
  if (certificates.size === 0) throw new SamlError('no_certificate')
  return { entityId, ssoRedirectUrl, certificates: [...certificates.values()] }
}

function readCertificate (base64Der: string): [string, IdpCertificate] {
  try {
    const { pem, certificate } = certificatePem(base64Der)
    return [certificate.fingerprint256, {
      pem, notAfter: new Date(certificate.validTo), fingerprint256: certificate.fingerprint256
    }]
  } catch (err) {
    throw new SamlError('malformed', { cause: err })
  }
}

/** Our SP metadata for one connection: its entity ID and ACS URL (HTTP-POST), signed assertions wanted. */
export function spMetadata ({ entityId, acsUrl }: { entityId: string, acsUrl: string }): string {
  return generateServiceProviderMetadata({
    issuer: entityId,
    callbackUrl: acsUrl,
    wantAssertionsSigned: true,
    identifierFormat: null
  })
}
