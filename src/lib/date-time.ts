import { serviceError } from '../errors.js'

// The contract's `format: date-time` is RFC 3339 as ajv-formats reads it: a space or a lower-case
// `t` for `T`, a lower-case `z`, any number of fraction digits, a leap second. JavaScript's Date
// parses only the ISO subset (upper case, at most a few fraction digits), and an Invalid Date sent
// to the database was a 500. This reads every form the validator admits.

const RFC3339 = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$/

/** The instant an RFC 3339 date-time names (a leap second as the last millisecond of its minute). */
function instantOf (value: string): Date | null {
  const m = RFC3339.exec(value)
  if (m === null) return null
  const [, date, hm, sec, fraction = '', zone = 'Z'] = m
  const leap = sec === '60'
  const ms = leap ? '999' : (fraction + '000').slice(0, 3)
  const d = new Date(`${date}T${hm}:${leap ? '59' : sec}.${ms}${zone.toUpperCase()}`)
  return Number.isNaN(d.getTime()) ? null : d
}

/** A query parameter's date-time as an instant, or 400 VALIDATION_FAILED naming it. */
export function queryInstant (name: string, value: string | undefined): Date | undefined {
  if (value === undefined) return undefined
  const d = instantOf(value)
  if (d !== null) return d
  const message = 'must be a date-time (RFC 3339)'
  const errors = [{ in: 'query', field: name, message }]
  throw serviceError('VALIDATION_FAILED', [`query.${name} ${message}`], { errors })
}
