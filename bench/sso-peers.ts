import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createTestIdp, makeKeyPair } from '../test/helpers/saml-idp.js'
import { startOidcProvider } from '../test/helpers/oidc-provider.js'

// The identity providers of `npm run bench -- --sso` (bench/sso.ts), in a process of their own so
// that the relying party's process does nothing but sign people in: the OpenID Provider of the
// tests (oidc-provider 9, Okta-like profile, on loopback) and the SAML IdP (samlify, keys made at
// start; its metadata served on loopback, for a connection by metadata URL). Forked by
// bench/sso.ts; first message: what the relying party pins; then it answers:
//   { id, kind: 'oidc', url }                   → { id, callback }: the provider's redirect back
//   { id, kind: 'saml', requestId, sign, now }  → { id, response }: a base64 SAMLResponse
//   { id, kind: 'counts' }                      → { id, counts }: requests the providers answered, by route
//                                                 (the SAML IdP's metadata as `metadata`)
// and exits on { kind: 'stop' } or when the parent goes.

export interface PeersReady {
  oidc: { issuer: string, clientId: string, clientSecret: string, redirectUri: string }
  saml: { idpEntityId: string, ssoRedirectUrl: string, certificate: string, spEntityId: string, acsUrl: string } & {
    /** The IdP's metadata on loopback, for a connection by metadata URL. */
    metadataUrl: string
  }
}
export type PeerQuestion =
  | { kind: 'oidc', url: string }
  | { kind: 'saml', requestId: string, sign: 'assertion' | 'both', now: string }
  | { kind: 'counts' }
type PeerRequest = PeerQuestion & { id: number }
export interface PeerAnswer {
  id: number
  callback?: string
  response?: string
  counts?: Record<string, number>
  error?: string
}

const SAML_SP = {
  entityId: 'https://bench.example/sso/saml/c1',
  acsUrl: 'https://bench.example/api/sso/saml/c1/acs'
}
const SAML_IDP = 'https://idp.bench.example/saml/metadata'
const SAML_SSO = 'https://idp.bench.example/saml/sso'

const closing: Array<() => unknown> = []
const teardown = { teardown: (fn: () => unknown) => { closing.push(fn) } }
const send = (m: unknown): void => { process.send?.(m) }

const oidc = await startOidcProvider(teardown, { profiles: [{ name: 'okta', kind: 'okta' }] })
const keys = await makeKeyPair(teardown, 'bench-idp')
const saml = createTestIdp({ entityId: SAML_IDP, keys, ssoUrl: SAML_SSO })
const profile = oidc.profile('okta')
let metadataServed = 0
const metadataSite = createServer((req, res) => {
  if (req.url !== '/metadata') { res.writeHead(404).end(); return }
  metadataServed++
  res.writeHead(200, { 'content-type': 'application/samlmetadata+xml' }).end(saml.metadata())
})
await new Promise<void>(resolve => metadataSite.listen(0, '127.0.0.1', resolve))
closing.push(async () => { await new Promise(resolve => metadataSite.close(resolve)) })

async function answer (m: PeerRequest): Promise<PeerAnswer> {
  if (m.kind === 'oidc') return { id: m.id, callback: (await oidc.signIn(m.url, 'alice')).href }
  if (m.kind === 'counts') return { id: m.id, counts: { ...profile.counts, metadata: metadataServed } }
  const response = await saml.loginResponse({
    sp: SAML_SP,
    requestId: m.requestId,
    nameId: 'ada@corp.example',
    now: new Date(m.now),
    sign: m.sign,
    attributes: { email: 'ada@corp.example', displayName: 'Ada' }
  })
  return { id: m.id, response }
}

async function stop (): Promise<void> {
  for (const fn of closing.reverse()) await fn()
  process.exit(0)
}

process.on('message', (m: PeerRequest | { kind: 'stop' }) => {
  if (m.kind === 'stop') {
    stop().catch(() => { process.exit(1) })
    return
  }
  answer(m).then(send, (err: unknown) => { send({ id: m.id, error: String(err) }) })
})
process.on('disconnect', () => { stop().catch(() => { process.exit(1) }) })
send({
  oidc: {
    issuer: profile.issuer,
    clientId: profile.clientId,
    clientSecret: profile.clientSecret,
    redirectUri: oidc.redirectUri
  },
  saml: {
    idpEntityId: SAML_IDP,
    ssoRedirectUrl: SAML_SSO,
    certificate: keys.certificate,
    spEntityId: SAML_SP.entityId,
    acsUrl: SAML_SP.acsUrl,
    metadataUrl: `http://127.0.0.1:${(metadataSite.address() as AddressInfo).port}/metadata`
  }
} satisfies PeersReady)
