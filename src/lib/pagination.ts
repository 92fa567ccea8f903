import { serviceError, type ServiceError } from '../errors.js'

// The one cursor of every list operation (members, invitations, audit events): opaque to clients,
// base64url of "<createdAt as ISO 8601>|<id>", the keyset position of the last item shown. A
// cursor that is not exactly that — wrong alphabet, a date outside 0000–9999 (PostgreSQL and
// JavaScript disagree beyond), an id of the wrong kind — is one and the same 400.

interface Position { createdAt: Date, id: string }

/** Every listed row is keyed by a uuid (the audit trail and events by a UUIDv7), as this service writes it. */
const UUID_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const BASE64URL = /^[A-Za-z0-9_-]{1,200}$/
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** The cursor naming a position (the lists build it through pageOf; the event feed directly). */
export function encodeCursor (p: Position): string {
  return Buffer.from(`${p.createdAt.toISOString()}|${p.id}`, 'utf8').toString('base64url')
}

/** The one 400 of a cursor this list did not issue. */
export function invalidCursor (): ServiceError {
  return serviceError('VALIDATION_FAILED', ['query.cursor is not a cursor from a previous page of this list'],
    { errors: [{ in: 'query', field: 'cursor', message: 'is not a cursor from a previous page of this list' }] })
}

/** The position a cursor names. Throws VALIDATION_FAILED. */
export function decodeCursor (cursor: string): Position {
  if (!BASE64URL.test(cursor)) throw invalidCursor()
  const parts = Buffer.from(cursor, 'base64url').toString('utf8').split('|')
  const [iso, key] = parts
  const createdAt = new Date(iso ?? '')
  // Round trip: 2026-02-31 parses (to March 3rd) but is not what this service wrote.
  if (parts.length !== 2 || iso === undefined || key === undefined || !ISO.test(iso) || !UUID_ID.test(key) ||
    Number.isNaN(createdAt.getTime()) || createdAt.toISOString() !== iso) throw invalidCursor()
  return { createdAt, id: key }
}

/** One page from `limit + 1` rows (the extra row says whether a next page exists). */
export function pageOf<R> (
  rows: R[],
  limit: number,
  position: (row: R) => Position
): { page: R[], nextCursor: string | null } {
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  return { page, nextCursor: rows.length > limit && last !== undefined ? encodeCursor(position(last)) : null }
}
