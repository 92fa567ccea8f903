import { BlockList, isIP, type LookupFunction } from 'node:net'
import { lookup as dnsLookup } from 'node:dns'

// SSRF: outside APP_ENV=local a webhook may only reach public addresses over https. The check
// runs when an endpoint is saved (a clear 400) and again on every connection, on the address the
// connection actually uses (the HTTP request's `lookup`), so a name that resolves to a public
// address when saved and to 169.254.169.254 later (DNS rebinding) is still refused.

const blocked = new BlockList()
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4]
] as const) blocked.addSubnet(net, prefix, 'ipv4')
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['2001:db8::', 32], ['64:ff9b::', 96],
  ['100::', 64]
] as const) blocked.addSubnet(net, prefix, 'ipv6')

/** Why an address may not be reached, or null when it is public. IPv4-mapped IPv6 is read as IPv4. */
function forbiddenAddress (address: string): string | null {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  const ip = mapped?.[1] ?? address
  const family = isIP(ip)
  if (family === 0) return `${address} is not an IP address`
  return blocked.check(ip, family === 4 ? 'ipv4' : 'ipv6') ? `${ip} is not a public address` : null
}

export interface AddressPolicy {
  /** A reason the URL may not be used (scheme, literal or resolved address), or null. */
  check(url: URL): Promise<string | null>
  /** The `lookup` for the connection: resolves, then refuses a forbidden address (ERR_ADDRESS_NOT_ALLOWED). */
  lookup: LookupFunction
}

/** `resolve`: DNS by default; tests inject a resolver so a name can resolve to what they need. */
export function createAddressPolicy (opts: { allowPrivate: boolean, resolve?: LookupFunction }): AddressPolicy {
  const resolve: LookupFunction = opts.resolve ?? dnsLookup
  const lookup: LookupFunction = (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err !== null) {
        callback(err, '', 0)
        return
      }
      const list = addresses as unknown as Array<{ address: string, family: number }>
      const bad = opts.allowPrivate ? null : list.map(a => forbiddenAddress(a.address)).find(r => r !== null) ?? null
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
      if (opts.allowPrivate) return null
      const host = url.hostname.replace(/^\[|\]$/g, '')
      if (isIP(host) !== 0) return forbiddenAddress(host)
      return await new Promise(resolve => {
        lookup(host, { all: true }, err => { resolve(err === null ? null : err.message) })
      })
    }
  }
}
