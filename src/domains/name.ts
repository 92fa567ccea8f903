import { domainToASCII, domainToUnicode } from 'node:url'
import consumerProviders from 'email-providers/all.json' with { type: 'json' }
import { serviceError } from '../errors.js'
import { isPublicSuffix, publicSuffixReason } from '../lib/public-suffix.js'

// What a domain is, as an admin adds it: lower case, no trailing dot, an internationalized name
// in its ASCII form (UTS #46, as the WHATWG URL parser converts hosts), at least two labels of
// letters, digits and inner hyphens, not a reserved name, not a consumer mail provider, and not a
// public suffix (`co.uk`, `github.io`: src/lib/public-suffix.ts).

// The consumer mail providers (gmail.com, outlook.com, gmx.de, …): the email-providers package's
// full list, updated with its releases.
const CONSUMER: ReadonlySet<string> = new Set(consumerProviders)
// Names that are nobody's to prove (RFC 2606, RFC 6761, RFC 6762, RFC 8375, ICANN's .internal).
const RESERVED_TLDS: ReadonlySet<string> = new Set(
  ['localhost', 'local', 'test', 'example', 'invalid', 'internal', 'onion', 'arpa', 'home', 'lan', 'corp']
)
const RESERVED: ReadonlySet<string> = new Set(['example.com', 'example.net', 'example.org'])
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/
const DOMAIN_MAX_LENGTH = 253

function refuse (why: string): never {
  throw serviceError('DOMAIN_NOT_ALLOWED', [why])
}

/** The domain as stored and compared; DOMAIN_NOT_ALLOWED when it cannot be a workspace's. */
export function normalizeDomain (input: string): string {
  const name = input.trim().replace(/\.$/, '')
  const ascii = name === '' ? '' : domainToASCII(name)
  // An A-label that does not decode (xn--zz): Node 20 answers '' for the whole name, Node 24 passes
  // it through unchanged; decoding each xn-- label tells on both.
  const undecodable = ascii.split('.').some(l => l.startsWith('xn--') && domainToUnicode(l) === l)
  if (ascii === '' || undecodable) {
    refuse('it is not a domain name (or an internationalized name that does not convert)')
  }
  const labels = ascii.split('.')
  const tld = labels[labels.length - 1] ?? ''
  const wellFormed = labels.length >= 2 && labels.every(l => LABEL.test(l)) && !/^[0-9]+$/.test(tld)
  if (ascii.length > DOMAIN_MAX_LENGTH || !wellFormed) {
    refuse(`${ascii} is not a domain name`)
  }
  if (RESERVED_TLDS.has(tld) || RESERVED.has(ascii)) refuse(`${ascii} is a reserved name`)
  if (CONSUMER.has(ascii)) refuse(`${ascii} is a consumer mail provider`)
  if (isPublicSuffix(ascii)) refuse(publicSuffixReason(ascii))
  return ascii
}

/** The domain of an e-mail address (addresses are stored in lower case, ASCII). */
export function domainOfEmail (email: string): string {
  return email.slice(email.lastIndexOf('@') + 1)
}

/** The DNS record an admin publishes to prove the domain: where, and what. */
export function verificationRecord (domain: string, token: string): { type: 'TXT', name: string, value: string } {
  return { type: 'TXT', name: `_workspace-verification.${domain}`, value: `ws-verify=${token}` }
}
