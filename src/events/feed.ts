import type { components } from '../generated/openapi.js'
import type { Ports } from '../ports/index.js'
import { listEvents, type EventType } from '../db/audit-events.js'
import { decodeCursor, encodeCursor } from '../lib/pagination.js'
import { toEventView } from './catalogue.js'

// The pull feed: a workspace's events oldest first, within the last 30 days. The cursor is the
// position of the last event read; a reader keeps it and asks again (nothing is ever skipped:
// ids grow with time, and a page ends where the reader stopped).

const HORIZON_MS = 30 * 86_400_000

export interface EventFeed {
  list(workspaceId: string, q: {
    after?: string | undefined, types?: EventType[] | undefined, limit: number
  }): Promise<components['schemas']['EventList']>
}

export function createEventFeed (deps: Pick<Ports, 'db' | 'clock'>): EventFeed {
  return {
    async list (workspaceId, q) {
      const position = q.after !== undefined ? decodeCursor(q.after) : null
      const rows = await listEvents(deps.db, {
        workspaceId,
        after: position?.id ?? null,
        since: new Date(deps.clock.now().getTime() - HORIZON_MS),
        types: q.types ?? null,
        limit: q.limit
      })
      const last = rows.at(-1)
      const nextCursor = last !== undefined ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : q.after ?? null
      return { items: rows.map(toEventView), nextCursor }
    }
  }
}
