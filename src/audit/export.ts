import { Readable } from 'node:stream'
import type { Ports } from '../ports/index.js'
import { listAuditEventsAfter, type AuditEventRow, type AuditFilter } from '../db/audit-events.js'
import { toAuditEventView } from './view.js'

// The audit trail as a file (issue 55, item 1): every record the filters select, oldest first, as
// NDJSON (one AuditEvent per line, as the list shows it) or CSV. Read a page at a time by id and
// written as the client takes it: the stream asks for the next page only when the socket has
// drained the last (Readable.from pulls on demand), so memory stays one page whatever the range.
// A cut export resumes: the id of the last complete line is `after` of the next request.

/** Rows read per query: large enough that the round trips do not dominate, small in memory (~1 MB). */
const PAGE = 2000

export type ExportFormat = 'ndjson' | 'csv'

const CSV_COLUMNS = [
  'id', 'createdAt', 'action', 'actorType', 'actorId', 'actorLabel', 'source', 'targetType', 'targetId', 'payload'
] as const

/**
 * One CSV cell (RFC 4180: always quoted, quotes doubled). A cell a spreadsheet would read as a
 * formula — starting with =, +, -, @, a tab or a carriage return (OWASP, CSV injection) — gets a
 * leading apostrophe, so it opens as the text it is.
 */
export function csvCell (value: string | null): string {
  if (value === null) return '""'
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value
  return `"${text.replace(/"/g, '""')}"`
}

function csvLine (row: AuditEventRow): string {
  const cells = [
    row.id, row.createdAt.toISOString(), row.action, row.actorType, row.actorId, row.actorLabel, row.source,
    row.targetType, row.targetId, JSON.stringify(row.payload)
  ]
  return `${cells.map(csvCell).join(',')}\r\n`
}

function ndjsonLine (row: AuditEventRow): string {
  return `${JSON.stringify(toAuditEventView(row))}\n`
}

export interface ExportRequest {
  filter: AuditFilter
  /** Resume after this record (the id of the last line received). */
  after: string | null
  format: ExportFormat
}

/**
 * The export as a byte stream. A query that fails midway destroys the stream (the client sees a
 * cut transfer, never a short file that looks whole) after logging why.
 */
export function exportAuditTrail (deps: Pick<Ports, 'db' | 'log'>, req: ExportRequest): Readable {
  const line = req.format === 'csv' ? csvLine : ndjsonLine
  async function * chunks (): AsyncGenerator<string> {
    // A resumed CSV continues the file it resumes: no second header.
    if (req.format === 'csv' && req.after === null) yield `${CSV_COLUMNS.join(',')}\r\n`
    let after = req.after
    for (;;) {
      const rows = await listAuditEventsAfter(deps.db, { ...req.filter, after, limit: PAGE })
      if (rows.length > 0) yield rows.map(line).join('')
      const last = rows[rows.length - 1]
      if (last === undefined || rows.length < PAGE) return
      after = last.id
    }
  }
  const stream = Readable.from(chunks(), { objectMode: false })
  stream.on('error', err => { deps.log.warn({ err: err.message }, 'audit export cut') })
  return stream
}
