import type { operations, paths } from '../../src/generated/openapi.js'
import { call, type Problem } from '../api.js'
import { screenWordsOf } from '../i18n.js'
import { fieldErrors, refusalWords } from '../words.js'
import type own from '../../src/i18n/catalogues/en/console-activity.json'

const { t } = screenWordsOf<typeof own>('activity')

// The Activity screen's export, read as it streams (getAuditEventsExport). `api` reads a whole
// answer before it returns; an export of a year is read a chunk at a time instead, by `fetch` on
// the contract's path and query types (same origin, the session cookie), so the screen can count
// the records as they arrive. A refusal is read by `call`, as every other answer is. Only complete
// lines are kept: when the transfer is cut, the next request asks for the rest with `after` = the
// id of the last complete line, and the parts concatenate into the file an uncut export gives (a
// resumed CSV has no second header). Part of the chunk fetched at the first Download
// (activity-export-run.tsx), not of the screen's.

export type ExportQuery = Omit<NonNullable<operations['getAuditEventsExport']['parameters']['query']>, 'after'>
export type ExportFormat = 'ndjson' | 'csv'

const PATH = '/api/audit-events/export' satisfies keyof paths
const TYPES: Record<ExportFormat, string> = { ndjson: 'application/x-ndjson', csv: 'text/csv' }
/** Cuts in a row, each bringing no new record, before the export gives up. */
const MAX_RETRIES = 5

/** What has arrived: complete lines only, a CSV's header first. Kept across attempts (and a retry). */
export interface Received {
  parts: string[]
  /** Complete records (a CSV's header is not one). */
  records: number
  /** The id of the last complete record: `after` of the next attempt. */
  last: string | undefined
  /** Whether a CSV's header row has arrived. */
  header: boolean
}

export const nothingReceived = (): Received => ({ parts: [], records: 0, last: undefined, header: false })

/**
 * Where the last complete record of `text` ends (0: none yet), how many records end before it and
 * where the last one starts. A CSV cell may hold a line break inside its quotes: a record ends at a
 * line break outside them.
 */
function complete (text: string, format: ExportFormat): { end: number, count: number, lastStart: number } {
  let end = 0; let count = 0; let lastStart = 0
  if (format === 'ndjson') {
    // JSON escapes its line breaks: every one ends a record.
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) { lastStart = end; end = i + 1; count++ }
    return { end, count, lastStart }
  }
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 34) quoted = !quoted // "
    else if (c === 10 && !quoted) { lastStart = end; end = i + 1; count++ } // \n
  }
  return { end, count, lastStart }
}

/** The id a line starts with: an AuditEvent's `id`, or a CSV line's first cell (always quoted). */
function idOf (line: string, format: ExportFormat): string | undefined {
  if (format === 'csv') return line.slice(1, line.indexOf('"', 1))
  const id = (JSON.parse(line) as { id?: unknown }).id
  return typeof id === 'string' ? id : undefined
}

/** Keep the complete lines of `text`; the rest (a line cut in its middle) is returned for the next chunk. */
function take (got: Received, text: string, format: ExportFormat): string {
  const { end, count, lastStart } = complete(text, format)
  if (end === 0) return text
  const lines = text.slice(0, end)
  got.parts.push(lines)
  // A CSV's first line is its header: no record, and no id to resume after.
  const header = format === 'csv' && !got.header ? 1 : 0
  got.header = format === 'csv'
  got.records += count - header
  if (count > header) got.last = idOf(lines.slice(lastStart).trimEnd(), format)
  return text.slice(end)
}

/** One request: 'done' when the export ended whole, 'cut' when the transfer stopped short, else the refusal. */
async function attempt (
  got: Received, query: ExportQuery, format: ExportFormat, signal: AbortSignal, progress: () => void
): Promise<'done' | 'cut' | Problem> {
  // Nothing complete yet: start afresh (no `after`, a CSV's header again).
  if (got.last === undefined) Object.assign(got, nothingReceived())
  const url = new URL(PATH, location.origin)
  for (const [name, value] of Object.entries({ ...query, after: got.last })) if (value !== undefined) url.searchParams.set(name, String(value))
  const response = await fetch(url, { credentials: 'same-origin', headers: { accept: TYPES[format] }, signal })
  if (!response.ok || response.body === null) {
    const text = await response.text()
    let error: unknown = text
    try { error = JSON.parse(text) } catch {}
    // The console's one reading of a refusal (api.ts): the same words as every other screen's.
    const refused = await call(Promise.resolve({ error, response }))
    return refused.ok ? 'cut' : refused.problem
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
  let rest = ''
  for (;;) {
    const { done, value } = await reader.read()
    // A whole export ends with a line break: anything after the last one is a line cut short.
    if (done) return rest === '' ? 'done' : 'cut'
    rest = take(got, rest + value, format)
    progress()
  }
}

const pause = async (ms: number, signal: AbortSignal) => await new Promise<void>((resolve, reject) => {
  const timer = setTimeout(resolve, ms)
  signal.addEventListener('abort', () => { clearTimeout(timer); reject(signal.reason) }, { once: true })
})

/**
 * Read the export into `got`, resuming after each cut (up to MAX_RETRIES in a row that bring no
 * new record, waiting 0.25, 0.5, 1, 2 and 4 s before them). 'done', 'cancelled' (the signal aborted), or
 * the problem that stopped it, in words; what arrived stays in `got`, and calling again continues.
 */
export async function download (
  got: Received, query: ExportQuery, format: ExportFormat, signal: AbortSignal,
  progress: (resuming: boolean) => void
): Promise<'done' | 'cancelled' | Problem> {
  let cuts = 0
  for (;;) {
    const before = got.records
    let ended: 'done' | 'cut' | Problem = 'cut'
    try {
      ended = await attempt(got, query, format, signal, () => { progress(false) })
    } catch {} // a network error: the transfer was cut
    if (signal.aborted) return 'cancelled'
    if (ended !== 'cut') return ended
    cuts = got.records > before ? 1 : cuts + 1
    if (cuts > MAX_RETRIES) {
      return { status: 0, code: undefined, text: t('cuts', { cuts }), retryAfter: undefined, fields: [] }
    }
    progress(true)
    try { await pause(250 * 2 ** (cuts - 1), signal) } catch { return 'cancelled' }
  }
}

/** `audit-events-2026-12-07.ndjson`: `day`, today's date where the admin is. */
export function fileName (format: ExportFormat, partial: boolean, day: string): string {
  return `audit-events-${day}${partial ? '-partial' : ''}.${format}`
}

/** The instant a date's day begins where the admin is (`days` later), as the contract takes it; null: not a date. */
export function startOf (date: string, days = 0): string | null {
  const m = /^(\d{4,6})-(\d\d)-(\d\d)$/.exec(date)
  if (m === null) return null
  const d = new Date(0)
  d.setFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + days)
  d.setHours(0, 0, 0, 0)
  return Number.isNaN(d.getTime()) ? null : d.toISOString()
}

/** A refusal of the form's own fields before anything is sent, worded as the service's would be. */
export async function refusal (fields: Array<'since' | 'until'>): Promise<Problem> {
  await refusalWords()
  const refused = fieldErrors('VALIDATION_FAILED', { errors: fields.map(field => ({ in: 'query', field })) })
  return { status: 400, code: 'VALIDATION_FAILED', text: refused.map(f => f.words).join(' '), retryAfter: undefined, fields: refused }
}

/** Save what arrived as a file: a Blob, and a click on a link that downloads it. */
export function save (got: Received, format: ExportFormat, name: string): void {
  const href = URL.createObjectURL(new Blob(got.parts, { type: TYPES[format] }))
  const link = document.createElement('a')
  link.href = href
  link.download = name
  link.click()
  // The download has begun from the Blob by then; its URL would otherwise hold the file in memory.
  setTimeout(() => { URL.revokeObjectURL(href) }, 60_000)
}
