import type { components } from '../generated/openapi.js'
import { serviceError } from '../errors.js'
import { hashToken, safeEqual } from '../lib/tokens.js'
import { consumeSsoFlow, findSsoFlow, type SsoFlowRow } from '../db/sso-flows.js'
import { rememberSsoAssertion } from '../db/sso-assertions.js'
import type { SsoConnectionRow } from '../db/sso-connections.js'
import { domainOfEmail } from '../domains/name.js'
import { connectionOr404, oidcRedirectUri, samlEndpoints } from './connection-context.js'
import { finishSignIn as finishOidc, vouchesFor } from './oidc.js'
import { OidcError } from './oidc-errors.js'
import { finishSignIn as finishSaml, SamlError, spMetadata } from './saml.js'
import { auditRefusal, connectionById, SsoRefusal, type SsoSignInDeps } from './sign-in-context.js'
import { signInMember, type ProviderIdentity } from './sign-in-member.js'
import {
  oidcConnectionOf, oidcProviderOf, openVerifier, samlConnectionOf, startByEmail, startFlow, type SsoStart
} from './sign-in-flow.js'

// Sign-in through a workspace's SSO connection (issue 53): the start (by the address's domain, or
// an admin's test of one connection), the OIDC callback and the SAML ACS. Each callback checks the
// browser's state, lets the protocol module check the provider's answer, then decides who signs in
// (sign-in-member.ts); a test sign-in stops before that and shows the claims. Every refusal is
// one short code in an audit line and SSO_SIGN_IN_REFUSED (sign-in-context.ts).

type SsoTestSignIn = components['schemas']['SsoTestSignIn']
export type SsoOutcome =
  | { kind: 'signed_in', token: string }
  | { kind: 'test', result: SsoTestSignIn }
  /** An IdP-initiated response where the connection allows it: a fresh SP-initiated sign-in instead. */
  | { kind: 'restart', start: SsoStart }

export interface SsoSignInService {
  startByEmail(email: string): Promise<SsoStart>
  /** An admin's test of one of their workspace's connections; the session token of the caller. */
  startTest(sessionToken: string | undefined, connectionId: string): Promise<SsoStart>
  finishOidc(input: OidcCallback): Promise<SsoOutcome>
  finishSaml(connectionId: string, input: SamlPost): Promise<SsoOutcome>
  /** The SP metadata XML of a SAML connection; 404 for another id. */
  samlMetadata(connectionId: string): Promise<string>
}

type Claims = Record<string, string[]>

type Believed = ProviderIdentity & { emailVerified: boolean }

function testResult (row: SsoConnectionRow, identity: Believed, claims: Claims): SsoTestSignIn {
  return {
    connectionId: row.id,
    protocol: row.protocol,
    issuer: identity.issuer,
    subject: identity.subject,
    email: identity.email,
    emailVerified: identity.emailVerified,
    claims
  }
}

async function finish (
  deps: SsoSignInDeps, row: SsoConnectionRow, flow: SsoFlowRow, identity: Believed, claims: Claims
): Promise<SsoOutcome> {
  if (flow.purpose === 'test') return { kind: 'test', result: testResult(row, identity, claims) }
  return { kind: 'signed_in', ...await signInMember(deps, row, identity) }
}

/** Runs `body`; an SsoRefusal (or a protocol module's refusal) becomes its audit line and the answer. */
async function refusing<T> (
  deps: SsoSignInDeps, context: { row: () => SsoConnectionRow | null, purpose: () => string },
  body: () => Promise<T>
): Promise<T> {
  try {
    return await body()
  } catch (err) {
    const refusal = err instanceof SsoRefusal
      ? err
      : err instanceof OidcError || err instanceof SamlError ? new SsoRefusal(err.code, context.row()) : null
    if (refusal === null) throw err
    throw await auditRefusal(deps, refusal, { purpose: context.purpose() })
  }
}

type OidcCallback = { cookieState: string | undefined, callbackUrl: string, state: string | undefined }
type SamlPost = { cookieState: string | undefined, samlResponse: string, relayState: string | undefined }

async function oidcCallback (
  deps: SsoSignInDeps, input: OidcCallback, seen: { row: SsoConnectionRow | null, purpose: string }
): Promise<SsoOutcome> {
  const { cookieState, state } = input
  const refuse = (code: string): never => { throw new SsoRefusal(code, seen.row) }
  if (state === undefined || state === '') refuse('state_mismatch')
  const stateHash = hashToken(state as string)
  const known = await findSsoFlow(deps.db, stateHash)
  seen.row = known === null ? null : await connectionById(deps, known.connectionId)
  if (known !== null) seen.purpose = known.purpose
  if (cookieState === undefined || !safeEqual(cookieState, state as string)) refuse('state_mismatch')
  const flow = await consumeSsoFlow(deps.db, stateHash, deps.clock.now())
  if ('reason' in flow) return refuse(flow.reason === 'used' ? 'state_replayed' : `state_${flow.reason}`)
  const row = seen.row
  if (row === null || row.protocol !== 'oidc' || flow.oidcNonce === null || flow.oidcVerifierEnc === null) {
    return refuse('state_mismatch')
  }
  const provider = await oidcProviderOf(deps, row)
  const identity = await finishOidc(provider, input.callbackUrl, {
    state: state as string,
    nonce: flow.oidcNonce,
    codeVerifier: openVerifier(deps, stateHash, flow.oidcVerifierEnc),
    redirectUri: oidcRedirectUri(deps.config.publicUrl)
  })
  const email = identity.email
  const connection = oidcConnectionOf(deps, row)
  const domain = email !== null && email.includes('@') ? domainOfEmail(email.toLowerCase()) : null
  const vouched = domain !== null && vouchesFor(identity, domain, connection)
  const claims: Claims = {}
  for (const [name, value] of Object.entries({ name: identity.name, tid: identity.tid, hd: identity.hd })) {
    if (value !== undefined) claims[name] = [value]
  }
  const believed = {
    issuer: identity.issuer,
    subject: identity.subject,
    email,
    name: identity.name ?? null,
    vouched,
    emailVerified: identity.emailVerified
  }
  return await finish(deps, row, flow, believed, claims)
}

async function acs (
  deps: SsoSignInDeps, row: SsoConnectionRow, input: SamlPost, seen: { purpose: string }
): Promise<SsoOutcome> {
  const { cookieState, relayState } = input
  const refuse = (code: string): never => { throw new SsoRefusal(code, row) }
  // IdP-initiated sign-in (a tile in the provider's dashboard), where the connection allows it: the
  // unsolicited response is never believed — no request of ours, no browser bound to it — it only
  // starts a fresh SP-initiated sign-in with the same provider, which answers at once while the
  // person is signed in there. Without a cookie it can be nothing else.
  const restart = async (): Promise<SsoOutcome> =>
    ({ kind: 'restart', start: await startFlow(deps, row, 'sign_in', null) })
  if (cookieState === undefined || cookieState === '') {
    return row.saml?.idpInitiated === true ? await restart() : refuse('state_mismatch')
  }
  if (relayState !== undefined && relayState !== '' && !safeEqual(relayState, cookieState as string)) {
    refuse('state_mismatch')
  }
  const stateHash = hashToken(cookieState as string)
  const now = deps.clock.now()
  // Read first, used up after the response's checks: a response presented again with its
  // browser's cookie is then refused by the assertion store (replayed), on every instance.
  const known = await findSsoFlow(deps.db, stateHash)
  if (known === null || known.connectionId !== row.id || known.samlRequestId === null) {
    return refuse('state_mismatch')
  }
  seen.purpose = known.purpose
  if (known.expiresAt.getTime() <= now.getTime()) refuse('state_expired')
  const sp = samlEndpoints(deps.config.publicUrl, row.id)
  const connection = await samlConnectionOf(deps, row)
  let identity: Awaited<ReturnType<typeof finishSaml>>
  try {
    identity = await finishSaml(connection, input.samlResponse, { requestId: known.samlRequestId, ...sp }, {
      now,
      rememberAssertion: async (assertionId, keepUntil) => await rememberSsoAssertion(deps.db, {
        idpEntityId: connection.idpEntityId, assertionId, keepUntil, now
      })
    })
  } catch (err) {
    // A tile clicked while a sign-in of this browser was under way: a fresh one, as above.
    const tile = err instanceof SamlError && err.code === 'unsolicited'
    if (tile && row.saml?.idpInitiated === true) return await restart()
    throw err
  }
  const flow = await consumeSsoFlow(deps.db, stateHash, now)
  if ('reason' in flow) return refuse(flow.reason === 'used' ? 'state_replayed' : `state_${flow.reason}`)
  // The connection's pinned IdP states the address: believed at the connection's own domains only.
  const email = identity.email
  const vouched = email !== null && email.includes('@') && row.domains.includes(domainOfEmail(email.toLowerCase()))
  const name = identity.attributes.displayName?.[0] ?? identity.attributes.name?.[0] ?? null
  const believed = { issuer: identity.issuer, subject: identity.nameId, email, name, vouched, emailVerified: vouched }
  return await finish(deps, row, flow, believed, identity.attributes)
}

export function createSsoSignInService (deps: SsoSignInDeps): SsoSignInService {
  return {
    startByEmail: async email => await startByEmail(deps, email),

    async startTest (sessionToken, connectionId) {
      const actor = sessionToken === undefined || sessionToken === ''
        ? null
        : await deps.sessions.authenticate(sessionToken)
      if (actor === null) throw serviceError('UNAUTHENTICATED')
      if (actor.role !== 'admin') throw serviceError('FORBIDDEN', ['admin'])
      const row = await connectionOr404(deps, actor, connectionId)
      return await startFlow(deps, row, 'test', actor.userId)
    },

    async finishOidc (input) {
      const seen: { row: SsoConnectionRow | null, purpose: string } = { row: null, purpose: 'sign_in' }
      return await refusing(deps, { row: () => seen.row, purpose: () => seen.purpose },
        async () => await oidcCallback(deps, input, seen))
    },

    async finishSaml (connectionId, input) {
      const row = await connectionById(deps, connectionId)
      if (row === null || row.protocol !== 'saml') throw serviceError('SSO_CONNECTION_NOT_FOUND')
      const seen = { purpose: 'sign_in' }
      return await refusing(deps, { row: () => row, purpose: () => seen.purpose },
        async () => await acs(deps, row, input, seen))
    },

    async samlMetadata (connectionId) {
      const row = await connectionById(deps, connectionId)
      if (row === null || row.protocol !== 'saml') throw serviceError('SSO_CONNECTION_NOT_FOUND')
      const sp = samlEndpoints(deps.config.publicUrl, row.id)
      return spMetadata({ entityId: sp.spEntityId, acsUrl: sp.acsUrl })
    }
  }
}
