import type { components } from '../generated/openapi.js'
import type { Database } from '../db/client.js'
import type { Clock } from '../clock.js'
import type { Principal } from '../principal.js'
import { invitationFunnel } from '../db/invitations.js'
import { queryInstant } from '../lib/date-time.js'
import { serviceError } from '../errors.js'

// The workspace's invitation funnel over a period (issue 29): of the invitations sent in it
// (created in [since, until) and handed to the relay or the identity provider), how many were
// viewed, accepted, expired without being viewed, bounced. One indexed statement (migration 020).

export type InvitationFunnel = components['schemas']['InvitationFunnel']

const DEFAULT_DAYS = 30
const EARLIEST = Date.parse('0001-01-01T00:00:00.000Z')

export async function funnelOf (
  deps: { db: Database, clock: Clock },
  actor: Principal,
  q: { since?: string | undefined, until?: string | undefined }
): Promise<InvitationFunnel> {
  const now = deps.clock.now()
  const until = queryInstant('until', q.until) ?? now
  // The default start, never before year 1 (an `until` in January of year 1 is a valid date-time).
  const since = queryInstant('since', q.since) ??
    new Date(Math.max(until.getTime() - DEFAULT_DAYS * 86_400_000, EARLIEST))
  if (since.getTime() >= until.getTime()) {
    const message = 'must be before until'
    const errors = [{ in: 'query', field: 'since', message }]
    throw serviceError('VALIDATION_FAILED', [`query.since ${message}`], { errors })
  }
  const counts = await invitationFunnel(deps.db, { workspaceId: actor.workspaceId, since, until, now })
  return { since: since.toISOString(), until: until.toISOString(), ...counts }
}
