import { randomBytes } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import type { Test } from 'tap'
import { FakeClock } from '../../src/clock.js'
import type { SignedIn, TestApp } from './build.js'

// What the SSO sign-in tests share (sign-in-oidc.test.ts, sign-in-saml.test.ts): a workspace with
// a verified domain and a connection, the cookies of a redirect, and the proof that a refusal
// signed no one in and wrote nothing but its audit line.

export const PUBLIC_URL = 'http://localhost:3000'
export const ENCRYPTION_KEY = randomBytes(32).toString('hex')

/** The real time on a FakeClock (build() takes one): the providers on loopback keep the real time. */
export class RealTimeClock extends FakeClock {
  #offset = 0
  override now (): Date { return new Date(Date.now() + this.#offset) }
  override advance (ms: number): void { this.#offset += ms }
}

type Tap = Pick<Test, 'equal' | 'same' | 'match' | 'ok'>

/** A verified domain of the workspace, as the DNS check leaves it. */
export async function verifiedDomain (h: TestApp, workspaceId: string, name: string): Promise<void> {
  await h.db.query(
    `INSERT INTO workspace_domains (workspace_id, domain, status, token, verified_at, created_at, updated_at)
     VALUES ($1, $2, 'verified', $3, now(), now(), now())`, [workspaceId, name, randomBytes(32).toString('hex')])
}

/** A connection made through the API by the workspace's admin; its id. */
export async function createConnection (h: TestApp, admin: SignedIn, body: Record<string, unknown>): Promise<string> {
  const res = await h.inject({
    method: 'POST',
    url: '/api/sso/connections',
    headers: { cookie: admin.cookie, 'content-type': 'application/json' },
    payload: JSON.stringify(body)
  })
  if (res.statusCode !== 201) throw new Error(`connection not created: ${res.body}`)
  return (res.json() as { id: string }).id
}

/** The value of cookie `name` a response sets, or undefined. */
export function cookieOf (res: LightMyRequestResponse, name: string): string | undefined {
  return res.cookies.find(c => c.name === name && c.value !== '')?.value
}

/** What a refusal may not change: people, sessions, identities, invitations, and audit lines but the refusal's. */
interface Writes { users: number, sessions: number, identities: number, accepted: number, audit: number }

export async function writes (h: TestApp): Promise<Writes> {
  const r = await h.db.query<Writes>(
    `SELECT (SELECT count(*)::int FROM users) AS users,
            (SELECT count(*)::int FROM sessions) AS sessions,
            (SELECT count(*)::int FROM sso_identities) AS identities,
            (SELECT count(*)::int FROM invitations WHERE status = 'accepted') AS accepted,
            (SELECT count(*)::int FROM audit_events WHERE action <> 'sso.sign_in_refused') AS audit`)
  return r.rows[0] as Writes
}

/** The codes of the refusals audited so far for the connection, oldest first. */
export async function refusals (h: TestApp, connectionId: string): Promise<string[]> {
  const r = await h.db.query<{ code: string }>(
    `SELECT payload->>'code' AS code FROM audit_events
      WHERE action = 'sso.sign_in_refused' AND target_id = $1 ORDER BY created_at, id`, [connectionId])
  return r.rows.map(row => row.code)
}

/** Runs `attempt`, which must be refused: 403 with `reason`, nothing written but one audit line `code`. */
export async function refused (
  t: Tap, h: TestApp, connectionId: string, code: string, reason: string,
  attempt: () => Promise<LightMyRequestResponse>
): Promise<void> {
  const before = await writes(h)
  const audited = await refusals(h, connectionId)
  const res = await attempt()
  t.equal(res.statusCode, 403, `${code}: 403`)
  t.match(res.json(), { code: 'SSO_SIGN_IN_REFUSED', details: { reason } }, `${code}: answered ${reason}`)
  t.ok(!res.body.includes('Error') && !res.body.includes(' at '), `${code}: no internal text`)
  t.equal(res.cookies.some(c => c.name === 'service_session' && c.value !== ''), false, `${code}: no session cookie`)
  t.same(await writes(h), before, `${code}: nothing signed in, nothing written`)
  t.same(await refusals(h, connectionId), [...audited, code], `${code}: one audit line`)
}
