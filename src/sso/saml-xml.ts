import { X509Certificate } from 'node:crypto'
import { createRequire } from 'node:module'
import { SamlError } from './saml-error.js'

// XML as the SAML code reads it: parsed only after the hardening every message and metadata
// document passes (no DOCTYPE, so no entity of any kind; well-formed or refused), then read by
// namespace and local name, never by prefix.

export const NS = {
  protocol: 'urn:oasis:names:tc:SAML:2.0:protocol',
  assertion: 'urn:oasis:names:tc:SAML:2.0:assertion',
  metadata: 'urn:oasis:names:tc:SAML:2.0:metadata',
  dsig: 'http://www.w3.org/2000/09/xmldsig#'
} as const

// The few DOM members read here. @xmldom/xmldom's own typings declare the browser's DOM for the
// whole program (`/// <reference lib="dom" />`), which retypes fetch's Headers and more in every
// file; loaded through require, its parser is described by these instead.
interface XmlNode {
  readonly nodeType: number
  readonly parentNode: XmlNode | null
  readonly firstChild: XmlNode | null
  readonly nextSibling: XmlNode | null
  readonly textContent: string | null
}

export interface XmlElement extends XmlNode {
  readonly namespaceURI: string | null
  readonly localName: string
  readonly attributes: ArrayLike<{ readonly localName: string | null, readonly name: string, readonly value: string }>
  hasAttribute: (name: string) => boolean
  getAttribute: (name: string) => string | null
  getElementsByTagNameNS: (ns: string, localName: string) => ArrayLike<XmlElement>
}

interface XmlDocument {
  readonly documentElement: XmlElement | null
}

type ParseHandler = (message: string) => void
type ErrorHandler = Record<'warning' | 'error' | 'fatalError', ParseHandler>
const require = createRequire(import.meta.url)
const { DOMParser } = require('@xmldom/xmldom') as {
  DOMParser: new (options: { errorHandler: ErrorHandler }) => {
    parseFromString: (xml: string, mimeType: string) => XmlDocument | undefined
  }
}

/**
 * Parses `xml` refusing any DOCTYPE or entity declaration and any parse error or warning; returns
 * the document element.
 */
export function parseHardenedXml (xml: string): XmlElement {
  // A DTD is never needed in SAML; refused before the parser sees it, whatever it declares.
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw new SamlError('doctype')
  let failure: string | undefined
  const note = (message: string) => { failure ??= message }
  const doc = new DOMParser({ errorHandler: { warning: note, error: note, fatalError: note } })
    .parseFromString(xml, 'text/xml')
  const root = doc?.documentElement
  if (failure !== undefined || root == null) throw new SamlError('malformed', { cause: failure })
  return root
}

/** The element children of `parent` named `{ns}localName`. */
export function childElements (parent: XmlElement, ns: string, localName: string): XmlElement[] {
  const found: XmlElement[] = []
  for (let node = parent.firstChild; node !== null; node = node.nextSibling) {
    const element = node as XmlElement
    if (element.nodeType === 1 && element.namespaceURI === ns && element.localName === localName) found.push(element)
  }
  return found
}

/** The one child `{ns}localName` of `parent`, undefined when absent; more than one is malformed. */
export function onlyChild (parent: XmlElement, ns: string, localName: string): XmlElement | undefined {
  const found = childElements(parent, ns, localName)
  if (found.length > 1) throw new SamlError('malformed')
  return found[0]
}

/** Every descendant element `{ns}localName` of `root` (not `root` itself), at any depth. */
export function descendants (root: XmlElement, ns: string, localName: string): XmlElement[] {
  return Array.from(root.getElementsByTagNameNS(ns, localName))
}

/**
 * An element's whole text: every text node under it joined. Reading the first text node alone is
 * the comment-truncation bug (`user@corp.com<!---->.evil.com` read as `user@corp.com`).
 */
export function textOf (element: XmlElement): string {
  return (element.textContent ?? '').trim()
}

/** The attribute's value, or undefined when it is absent (an empty attribute stays ''). */
export function attribute (element: XmlElement, name: string): string | undefined {
  return element.hasAttribute(name) ? element.getAttribute(name) ?? '' : undefined
}

/** A certificate's base64 DER (as in ds:X509Certificate) without whitespace, from PEM or base64. */
export function certificateBody (pemOrBase64: string): string {
  return pemOrBase64.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '')
}

/** PEM text of a base64 DER certificate; throws when it is not a certificate. */
export function certificatePem (base64Der: string): { pem: string, certificate: X509Certificate } {
  const body = certificateBody(base64Der)
  const pem = `-----BEGIN CERTIFICATE-----\n${body.match(/.{1,64}/g)?.join('\n') ?? ''}\n-----END CERTIFICATE-----\n`
  return { pem, certificate: new X509Certificate(pem) }
}
