import { createPublicKey, type KeyObject } from 'node:crypto'
import { SignedXml } from 'xml-crypto'
import { SamlError } from './saml-error.js'
import { NS, childElements, descendants, type XmlElement } from './saml-xml.js'

// The enveloped XML signature of one element of a SAML Response, verified with xml-crypto against
// the pinned certificates: node-saml 5.1's getVerifiedXml, made on the document we parsed once
// (saml.ts says why node-saml's own call is not used for a Response).
//
// The rules are node-saml's, each kept: exactly one ds:Signature child of the element; at most two
// Transforms; exactly one Reference, by a same-document ID without quotes; that ID names exactly
// one element of the document, the signature's parent (counted here over the attributes ID, Id
// and id under any prefix, as xml-crypto counts them itself); xml-crypto's digest and signature
// check with each pinned certificate in turn (never one from KeyInfo); exactly one signed
// reference, whose canonical bytes are all the caller may read.

/** The attribute local names xml-crypto takes as an element's ID. */
const ID_NAMES = new Set(['ID', 'Id', 'id'])
const MAX_TRANSFORMS = 2

// A pinned certificate's public key, parsed once: from PEM, every verification would parse the
// X.509 certificate again (0.2 ms each, a tenth of a signature's cost). Keyed by the PEM text, so a
// rotated certificate is another entry; the oldest go past MAX_KEYS (connections pin a few each).
const MAX_KEYS = 256
const publicKeys = new Map<string, KeyObject>()

function publicKeyOf (pem: string): KeyObject {
  let key = publicKeys.get(pem)
  if (key === undefined) {
    key = createPublicKey(pem)
    if (publicKeys.size >= MAX_KEYS) publicKeys.delete(publicKeys.keys().next().value ?? '')
    publicKeys.set(pem, key)
  }
  return key
}

/**
 * Verifies the signature of `element`, an element of the document parsed from `xml` (line ends
 * normalized), with the first of `certificates` that verifies it; returns the canonical bytes of
 * `element` that the signature covers, all the caller may read. Throws SamlError('bad_signature').
 */
export function verifyEnvelopedSignature (
  xml: string, element: XmlElement, certificates: readonly string[]
): string {
  const signatures = childElements(element, NS.dsig, 'Signature')
  const signature = signatures[0]
  if (signatures.length !== 1 || signature === undefined) throw new SamlError('bad_signature')
  if (descendants(signature, NS.dsig, 'Transform').length > MAX_TRANSFORMS) throw new SamlError('bad_signature')
  let failure: unknown
  for (const certificate of certificates) {
    try {
      const signed = new SignedXml({ publicCert: publicKeyOf(certificate) })
      // xml-crypto looks an ID up with an XPath over the whole document per name it knows (ID, Id,
      // id): namesOnly has made sure no other element bears this ID under any of them.
      signed.idAttributes = ['ID']
      signed.loadSignature(signature as unknown as Parameters<SignedXml['loadSignature']>[0])
      const references = signed.getReferences()
      const uri = references[0]?.uri ?? ''
      if (references.length !== 1 || !uri.startsWith('#') || /['"]/.test(uri)) {
        throw new Error('not one reference by ID')
      }
      if (!namesOnly(element, uri.slice(1))) throw new Error('the reference is not the signature\'s parent alone')
      if (!signed.checkSignature(xml)) continue
      const bytes = signed.getSignedReferences()
      if (bytes.length !== 1 || bytes[0] === undefined) throw new Error('not one signed reference')
      return bytes[0]
    } catch (err) {
      // The next pinned certificate may still verify (node-saml tries each in turn likewise).
      failure = err
    }
  }
  throw new SamlError('bad_signature', { cause: failure })
}

/** Whether `id` is the ID of `element` and of no other element of its document. */
function namesOnly (element: XmlElement, id: string): boolean {
  let root: XmlElement = element
  while (root.parentNode !== null && root.parentNode.nodeType === 1) root = root.parentNode as XmlElement
  const named = [root, ...descendants(root, '*', '*')].filter(candidate =>
    Array.from(candidate.attributes).some(a => ID_NAMES.has(a.localName ?? a.name) && a.value === id))
  return named.length === 1 && named[0] === element
}
