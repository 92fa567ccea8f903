import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import type { Database } from '../../src/db/client.js'
import type { SignedIn } from './build.js'

// POST /api/users/invite for every suite: one way to send it, so a change to the operation (a
// required field, a header) is made here once.

/** Anything that injects a request: a TestApp or a bare Fastify instance. */
interface Injector { inject(opts: InjectOptions): Promise<LightMyRequestResponse> }

// The contract requires `role` on POST /api/users/invite; suites that are not about it send the
// member role unless the body names one (or is not an object: then it is sent as given).
export function withRole (body: unknown): unknown {
  return body !== null && typeof body === 'object' && !Array.isArray(body) && !('role' in body)
    ? {
        role: 'member',
        ...body
      }
    : body
}

/**
 * POST /api/users/invite with the session `cookie` (null: none, e.g. a bearer key in `headers`).
 * An object body is sent as JSON, with the member role unless it names one (withRole); a string
 * or Buffer is sent as it is (malformed JSON, another content type). `headers` come last: an
 * Idempotency-Key, a traceparent, another content-type.
 */
export async function invite (
  app: Injector, cookie: string | null, body: unknown, headers: Record<string, string> = {}
): Promise<LightMyRequestResponse> {
  const raw = typeof body === 'string' || Buffer.isBuffer(body)
  return await app.inject({
    method: 'POST',
    url: '/api/users/invite',
    headers: { ...(cookie === null ? {} : { cookie }), 'content-type': 'application/json', ...headers },
    payload: raw ? body : JSON.stringify(withRole(body))
  })
}

/** The Idempotency-Key header, for invite()'s `headers`. */
export function idempotencyKey (key: string): Record<string, string> {
  return { 'idempotency-key': key }
}

/**
 * invite() as `who`, which must answer 200 (it throws otherwise, with the answer): the answer and
 * the id of the pending invitation it made or re-sent in their workspace.
 */
export async function invited (
  app: Injector & { db: Database }, who: SignedIn, body: { email: string } & Record<string, unknown>,
  headers: Record<string, string> = {}
): Promise<{ res: LightMyRequestResponse, id: string }> {
  const res = await invite(app, who.cookie, body, headers)
  if (res.statusCode !== 200) throw new Error(`invite ${body.email}: ${res.statusCode} ${res.body}`)
  const row = await app.db.query<{ id: string }>(
    'SELECT id FROM invitations WHERE workspace_id = $1 AND email = $2 AND status = $3',
    [who.workspaceId, body.email, 'pending']
  )
  return { res, id: row.rows[0]?.id ?? '' }
}
