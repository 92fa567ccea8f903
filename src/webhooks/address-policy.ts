import { isIP, type LookupFunction } from 'node:net'
import ipaddr from 'ipaddr.js'
import { lookup as dnsLookup } from 'node:dns'

// SSRF: outside APP_ENV=local a webhook may only reach public addresses over https. The check
// runs when an endpoint is saved (a clear 400) and again on every connection, on the address the
// connection actually uses (the HTTP request's `lookup`), so a name that resolves to a public
// address when saved and to 169.254.169.254 later (DNS rebinding) is still refused.

// One classification for both times, from a maintained classifier (ipaddr.js, whose range tables
// follow the IANA special-purpose registries): an address may be reached only when it is in no
// special-purpose range ('unicast') and, for IPv6, inside 2000::/3, the only space allocated for
// global unicast (which also refuses the deprecated IPv4-compatible ::/96 and anything allocated
// after the library's last release). An IPv6 address that embeds an IPv4 one is read as that
// IPv4 address where the connection really goes to it (IPv4-mapped ::ffff:0:0/96, NAT64's
// well-known 64:ff9b::/96 under DNS64); the other embeddings (6to4, Teredo, local-use NAT64,
// IPv4-translated) are special ranges and refused whatever they embed.

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3')
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96')

/** The IPv4 address an IPv6 one connects to, when it embeds one that way; else null. */
function embeddedIPv4 (ip: ipaddr.IPv6): ipaddr.IPv4 | null {
  if (ip.isIPv4MappedAddress() || ip.match(NAT64_WELL_KNOWN)) {
    const b = ip.toByteArray()
    return new ipaddr.IPv4(b.slice(12))
  }
  return null
}

/** Why an address may not be reached, or null when it is public. */
function forbiddenAddress (address: string): string | null {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`
  const ip = ipaddr.parse(address)
  const v4 = ip.kind() === 'ipv4' ? ip as ipaddr.IPv4 : embeddedIPv4(ip as ipaddr.IPv6)
  if (v4 !== null) return v4.range() === 'unicast' ? null : `${address} is not a public address (${v4.range()})`
  const v6 = ip as ipaddr.IPv6
  if (v6.range() !== 'unicast') return `${address} is not a public address (${v6.range()})`
  return v6.match(GLOBAL_UNICAST_V6) ? null : `${address} is not a public address (not global unicast)`
}

export interface AddressPolicy {
  /** A reason the URL may not be used (scheme, literal or resolved address), or null. */
  check(url: URL): Promise<string | null>
  /** The `lookup` for the connection: resolves, then refuses a forbidden address (ERR_ADDRESS_NOT_ALLOWED). */
  lookup: LookupFunction
}

/**
 * `resolve`: DNS by default; tests inject a resolver so a name can resolve to what they need.
 * `allowedHosts`: names (lower case) the operator allows though they resolve to a private address
 * (SSO_ALLOWED_HOSTS: a company's own identity provider on its network); https still applies.
 */
export function createAddressPolicy (opts: {
  allowPrivate: boolean, resolve?: LookupFunction, allowedHosts?: readonly string[]
}): AddressPolicy {
  const resolve: LookupFunction = opts.resolve ?? dnsLookup
  const allowed = new Set(opts.allowedHosts ?? [])
  const anyAddress = (hostname: string): boolean => opts.allowPrivate || allowed.has(hostname.toLowerCase())
  const lookup: LookupFunction = (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err !== null) {
        callback(err, '', 0)
        return
      }
      const list = addresses as unknown as Array<{ address: string, family: number }>
      const bad = anyAddress(hostname) ? null : list.map(a => forbiddenAddress(a.address)).find(r => r !== null) ?? null
      const first = list[0]
      if (bad !== null || first === undefined) {
        const e = Object.assign(new Error(bad ?? `${hostname} does not resolve`), { code: 'ERR_ADDRESS_NOT_ALLOWED' })
        callback(e, '', 0)
        return
      }
      if ((options as { all?: boolean }).all === true) callback(null, list as never)
      else callback(null, first.address, first.family)
    })
  }
  return {
    lookup,
    async check (url) {
      if (url.protocol !== 'https:' && !(opts.allowPrivate && url.protocol === 'http:')) return 'it must use https'
      if (url.username !== '' || url.password !== '') return 'it must not carry credentials'
      const host = url.hostname.replace(/^\[|\]$/g, '')
      if (anyAddress(host)) return null
      if (isIP(host) !== 0) return forbiddenAddress(host)
      return await new Promise(resolve => {
        lookup(host, { all: true }, err => { resolve(err === null ? null : err.message) })
      })
    }
  }
}
