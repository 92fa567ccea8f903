import t from 'tap'
import { isIPv6, type LookupFunction } from 'node:net'
import { build, TEST_DATABASE_URL } from '../helpers/build.js'
import { createAddressPolicy } from '../../src/webhooks/address-policy.js'
import { postWebhook } from '../../src/webhooks/sender.js'

// SSRF: every entry of the IANA special-purpose address registries, IPv4 and IPv6 (written out
// here as data, as published at iana.org/assignments/iana-ipv4-special-registry and
// iana-ipv6-special-registry), plus the ranges that are special without being listed there
// (multicast, the deprecated IPv4-compatible and site-local IPv6 spaces), refused when an
// endpoint is saved — as a literal in the URL and as a name resolving to it — and at connect time,
// when a name that resolved to a public address at save time resolves to it (DNS rebinding).
// Addresses are the first, the last and the middle one of each block.

interface Entry {
  block: string
  name: string
  /** Addresses in the block that embed a public IPv4 address and so are reachable (NAT64, mapped). */
  reachable?: string[]
}

const IPV4_SPECIAL: Entry[] = [
  { block: '0.0.0.0/8', name: '"This network" (RFC 791)' },
  { block: '0.0.0.0/32', name: '"This host on this network" (RFC 1122)' },
  { block: '10.0.0.0/8', name: 'Private-Use (RFC 1918)' },
  { block: '100.64.0.0/10', name: 'Shared Address Space (RFC 6598)' },
  { block: '127.0.0.0/8', name: 'Loopback (RFC 1122)' },
  { block: '169.254.0.0/16', name: 'Link Local (RFC 3927)' },
  { block: '172.16.0.0/12', name: 'Private-Use (RFC 1918)' },
  { block: '192.0.0.0/24', name: 'IETF Protocol Assignments (RFC 6890)' },
  { block: '192.0.0.0/29', name: 'IPv4 Service Continuity Prefix (RFC 7335)' },
  { block: '192.0.0.8/32', name: 'IPv4 dummy address (RFC 7600)' },
  { block: '192.0.0.9/32', name: 'Port Control Protocol Anycast (RFC 7723)' },
  { block: '192.0.0.10/32', name: 'Traversal Using Relays around NAT Anycast (RFC 8155)' },
  { block: '192.0.0.170/32', name: 'NAT64/DNS64 Discovery (RFC 8880)' },
  { block: '192.0.0.171/32', name: 'NAT64/DNS64 Discovery (RFC 8880)' },
  { block: '192.0.2.0/24', name: 'Documentation (TEST-NET-1, RFC 5737)' },
  { block: '192.31.196.0/24', name: 'AS112-v4 (RFC 7535)' },
  { block: '192.52.193.0/24', name: 'AMT (RFC 7450)' },
  { block: '192.88.99.0/24', name: 'Deprecated (6to4 Relay Anycast, RFC 7526)' },
  { block: '192.88.99.2/32', name: '6a44-relay anycast address (RFC 6751)' },
  { block: '192.168.0.0/16', name: 'Private-Use (RFC 1918)' },
  { block: '192.175.48.0/24', name: 'Direct Delegation AS112 Service (RFC 7534)' },
  { block: '198.18.0.0/15', name: 'Benchmarking (RFC 2544)' },
  { block: '198.51.100.0/24', name: 'Documentation (TEST-NET-2, RFC 5737)' },
  { block: '203.0.113.0/24', name: 'Documentation (TEST-NET-3, RFC 5737)' },
  { block: '240.0.0.0/4', name: 'Reserved (RFC 1112)' },
  { block: '255.255.255.255/32', name: 'Limited Broadcast (RFC 919)' }
]

const PUBLIC_V4 = '93.184.216.34'
const IPV6_SPECIAL: Entry[] = [
  { block: '::1/128', name: 'Loopback Address (RFC 4291)' },
  { block: '::/128', name: 'Unspecified Address (RFC 4291)' },
  { block: '::ffff:0:0/96', name: 'IPv4-mapped Address (RFC 4291)', reachable: [`::ffff:${PUBLIC_V4}`] },
  { block: '64:ff9b::/96', name: 'IPv4-IPv6 Translat. (RFC 6052)', reachable: [`64:ff9b::${PUBLIC_V4}`] },
  { block: '64:ff9b:1::/48', name: 'IPv4-IPv6 Translat., local use (RFC 8215)' },
  { block: '100::/64', name: 'Discard-Only Address Block (RFC 6666)' },
  { block: '100:0:0:1::/64', name: 'Dummy IPv6 Prefix (RFC 9780)' },
  { block: '2001::/23', name: 'IETF Protocol Assignments (RFC 2928)' },
  { block: '2001::/32', name: 'TEREDO (RFC 4380)' },
  { block: '2001:1::1/128', name: 'Port Control Protocol Anycast (RFC 7723)' },
  { block: '2001:1::2/128', name: 'Traversal Using Relays around NAT Anycast (RFC 8155)' },
  { block: '2001:1::3/128', name: 'DNS-SD Service Registration Protocol Anycast (RFC 9665)' },
  { block: '2001:2::/48', name: 'Benchmarking (RFC 5180)' },
  { block: '2001:3::/32', name: 'AMT (RFC 7450)' },
  { block: '2001:4:112::/48', name: 'AS112-v6 (RFC 7535)' },
  { block: '2001:10::/28', name: 'Deprecated (previously ORCHID, RFC 4843)' },
  { block: '2001:20::/28', name: 'ORCHIDv2 (RFC 7343)' },
  { block: '2001:30::/28', name: 'Drone Remote ID Protocol Entity Tags (RFC 9374)' },
  { block: '2001:db8::/32', name: 'Documentation (RFC 3849)' },
  { block: '2002::/16', name: '6to4 (RFC 3056)' },
  { block: '2620:4f:8000::/48', name: 'Direct Delegation AS112 Service (RFC 7534)' },
  { block: '3fff::/20', name: 'Documentation (RFC 9637)' },
  { block: '5f00::/16', name: 'Segment Routing (SRv6) SIDs (RFC 9602)' },
  { block: 'fc00::/7', name: 'Unique-Local (RFC 4193)' },
  { block: 'fe80::/10', name: 'Link-Local Unicast (RFC 4291)' }
]

// Special, though not entries of the two registries above.
const OTHER_SPECIAL: Entry[] = [
  { block: '224.0.0.0/4', name: 'IPv4 multicast (RFC 5771)' },
  { block: 'ff00::/8', name: 'IPv6 multicast (RFC 4291)' },
  { block: '::/96', name: 'IPv4-compatible IPv6, deprecated (RFC 4291 §2.5.5.1)' },
  { block: 'fec0::/10', name: 'Site-local IPv6, deprecated (RFC 3879)' }
]

const PUBLIC = [PUBLIC_V4, '8.8.8.8', '1.1.1.1', '2606:2800:220:1:248:1893:25c8:1946', '2a00:1450:4001:82b::200e']

// Address arithmetic on BigInt, independent of the classifier under test.
function toBig (address: string): bigint {
  if (!isIPv6(address)) return address.split('.').reduce((n, o) => (n << 8n) + BigInt(o), 0n)
  let text = address
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)?.[1]
  if (v4 !== undefined) {
    const n = toBig(v4)
    text = text.slice(0, -v4.length) + `${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`
  }
  const [head = '', tail] = text.split('::')
  const left = head === '' ? [] : head.split(':')
  const right = tail === undefined || tail === '' ? [] : tail.split(':')
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
  return groups.reduce((n, g) => (n << 16n) + BigInt(`0x${g}`), 0n)
}

function fromBig (n: bigint, v6: boolean): string {
  if (!v6) return [24n, 16n, 8n, 0n].map(s => String((n >> s) & 255n)).join('.')
  return Array.from({ length: 8 }, (_, i) => ((n >> BigInt(112 - 16 * i)) & 0xffffn).toString(16)).join(':')
}

function samples (e: Entry): string[] {
  const [net = '', len = ''] = e.block.split('/')
  const v6 = isIPv6(net)
  const bits = v6 ? 128n : 32n
  const host = bits - BigInt(len)
  const first = toBig(net) & ~((1n << host) - 1n)
  const last = first + (1n << host) - 1n
  const out = new Set([first, last, first + (1n << host) / 2n].map(n => fromBig(n, v6)))
  for (const r of e.reachable ?? []) out.delete(fromBig(toBig(r), true))
  // An embedding block's middle address embeds 128.0.0.0, a public address: listed as reachable.
  if (e.reachable !== undefined) out.delete(fromBig(first + (1n << host) / 2n, v6))
  return [...out]
}

const ENTRIES = [...IPV4_SPECIAL, ...IPV6_SPECIAL, ...OTHER_SPECIAL]
const literal = (address: string) => (isIPv6(address) ? `[${address}]` : address)

// Names resolve as this table says: n<i>.test → the i-th address to refuse; public-<i>.test → a
// public one; rebind-<i>.test → a public address at the first lookup (save time), then the i-th.
const refused = ENTRIES.flatMap(e => samples(e).map(address => ({ entry: e, address })))
const reachable = [...PUBLIC, ...ENTRIES.flatMap(e => e.reachable ?? [])]
let rebinds = new Map<number, number>()
const resolve = ((hostname: string, _o: unknown, cb: (e: Error | null, a: unknown) => void) => {
  const m = /^(n|public|rebind)-(\d+)\.test$/.exec(hostname)
  const i = Number(m?.[2])
  const pick = (address: string | undefined) => {
    if (address === undefined) cb(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }), [])
    else cb(null, [{ address, family: isIPv6(address) ? 6 : 4 }])
  }
  if (m?.[1] === 'n') pick(refused[i]?.address)
  else if (m?.[1] === 'public') pick(reachable[i])
  else if (m?.[1] === 'rebind') {
    const seen = rebinds.get(i) ?? 0
    rebinds.set(i, seen + 1)
    pick(seen === 0 ? PUBLIC_V4 : refused[i]?.address)
  } else pick(undefined)
}) as unknown as LookupFunction

t.test('save time: every special-purpose address refused, as a literal and behind a name', async t => {
  const h = await build(t, {
    lookup: resolve,
    env: {
      APP_ENV: TEST_DATABASE_URL !== null ? 'production' : 'staging',
      SESSION_SECRET: 's'.repeat(40),
      PUBLIC_URL: 'https://workspace.example.com',
      SMTP_URL: 'smtp://127.0.0.1:9', // required outside local; nothing is sent here
      ...(TEST_DATABASE_URL !== null ? { DATABASE_URL: TEST_DATABASE_URL } : {})
    }
  })
  const admin = await h.signIn()
  const save = async (url: string) => await h.inject({
    method: 'POST',
    url: '/api/webhook-endpoints',
    headers: { cookie: admin.cookie, 'content-type': 'application/json' },
    payload: { url }
  })
  const accepted: string[] = []
  for (const [i, { entry, address }] of refused.entries()) {
    for (const url of [`https://${literal(address)}/hook`, `https://n-${i}.test/hook`]) {
      const res = await save(url)
      if (res.statusCode !== 400 || res.json().code !== 'WEBHOOK_URL_NOT_ALLOWED') {
        accepted.push(`${url} (${address}, ${entry.block} ${entry.name}): ${res.statusCode}`)
      }
    }
  }
  t.same(accepted, [], `${refused.length} addresses of ${ENTRIES.length} blocks × (literal, name): ` +
    `${accepted.length} of ${refused.length * 2} accepted`)
  let made = 0
  for (const [i, address] of reachable.entries()) {
    for (const url of [`https://${literal(address)}/hook`, `https://public-${i}.test/hook`]) {
      const res = await save(url)
      t.equal(res.statusCode, 201, `${url} (${address}) is reachable and accepted`)
      if (res.statusCode === 201) made++
    }
  }
  t.equal(made, reachable.length * 2)
})

t.test('connect time: a name that resolved to a public address at save time, then to a special one', async t => {
  rebinds = new Map()
  const policy = createAddressPolicy({ allowPrivate: false, resolve })
  const through: string[] = []
  for (const [i, { entry, address }] of refused.entries()) {
    const outcome = await postWebhook({
      url: `https://rebind-${i}.test:1/hook`, headers: {}, body: '{}', timeoutMs: 2000, policy
    })
    t.equal(rebinds.get(i), 2, `${address}: looked up at save-time check and again for the connection`)
    if (outcome.kind !== 'failed' || !outcome.error.startsWith('address not allowed')) {
      through.push(`${address} (${entry.block} ${entry.name}): ${JSON.stringify(outcome)}`)
    }
  }
  t.same(through, [], `${through.length} of ${refused.length} addresses reached the connection`)
})
