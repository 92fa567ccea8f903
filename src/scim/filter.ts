import { parse, type Filter } from 'scim2-parse-filter'
import { serviceError } from '../errors.js'
import { isUuid } from '../lib/uuid.js'

// A SCIM filter (RFC 7644 §3.4.2.2) as SQL: scim2-parse-filter parses the grammar; this walks its
// tree into a WHERE clause over the columns a resource type names, with every value a parameter.
// Attribute names compare case-insensitively (the RFC says so); a filter that does not parse, or
// names an attribute or operator the resource does not support, is 400 invalidFilter.

/** How one filterable attribute reads in SQL. */
interface FilterColumn {
  /** An SQL expression over the resource's row (it is never built from the request). */
  sql: string
  /**
   * text: compared as given; ci: compared case-insensitively (lower() of both sides); lower: a
   * column stored in lower case (a CHECK says so), compared case-insensitively by lowering the
   * value only, so that the column's own index serves `eq`; uuid: a uuid column, `eq` / `ne` as
   * uuids (its primary key serves them; a value that is no uuid equals nothing), other operators
   * on its text; bool: true/false only.
   */
  kind: 'text' | 'ci' | 'lower' | 'uuid' | 'bool'
}

/** A resource type's filterable attributes, by lower-case attribute path (`emails.value`). */
export type FilterColumns = Readonly<Record<string, FilterColumn>>

/** A custom test for one attribute (e.g. a group's members): SQL over one parameter. */
export type FilterSpecial = Readonly<Record<string, (param: string) => string>>

export interface SqlFilter { where: string, params: unknown[] }

const CORE_PREFIX = /^urn:ietf:params:scim:schemas:core:2\.0:(user|group):/i

function invalid (why: string): Error {
  return serviceError('SCIM_INVALID_FILTER', [why])
}

/** The filter's tree, or 400 invalidFilter saying what is wrong in words (never the parser's). */
function parseFilter (text: string): Filter {
  try {
    return parse(text)
  } catch {
    throw invalid(whatIsWrong(text))
  }
}

const OPERATORS = new Set(['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le', 'pr'])
const JOINERS = new Set(['and', 'or', 'not'])

/** The words of a filter, a quoted string as one (`userName eq "a b"` → 3); unclosed: null. */
function wordsOf (text: string): string[] | null {
  const words: string[] = []
  const re = /"(?:[^"\\]|\\.)*"|[()[\]]|[^\s()[\]"]+|"/g
  for (const m of text.matchAll(re)) {
    if (m[0] === '"') return null
    words.push(m[0])
  }
  return words
}

/**
 * Why a filter the parser refused does not parse, in a directory admin's words: an unclosed quote
 * or bracket, a missing value, an operator that is none, a value that is not JSON. The parser's
 * own messages ("Unexpected token … as valFilter operator", "[(EOT)] is not json") say none of it.
 */
function whatIsWrong (text: string): string {
  if (text.trim() === '') return 'the filter is empty'
  const words = wordsOf(text)
  if (words === null) return 'a quoted value is not closed: add the closing "'
  for (const [open, close] of [['(', ')'], ['[', ']']] as const) {
    let depth = 0
    for (const w of words) {
      if (w === open) depth++
      if (w === close && --depth < 0) return `a "${close}" closes nothing`
    }
    if (depth > 0) return `a "${open}" is not closed: add "${close}"`
  }
  const last = words.at(-1) ?? ''
  if (JOINERS.has(last.toLowerCase())) return `the filter ends with "${last}": a comparison must follow it`
  const flat = words.filter(w => !'()[]'.includes(w) && !JOINERS.has(w.toLowerCase()))
  for (let i = 0; i < flat.length; i += 3) {
    const [attribute = '', operator = '', value] = flat.slice(i, i + 3)
    const op = operator.toLowerCase()
    if (OPERATORS.has(attribute.toLowerCase())) {
      return `"${attribute}" is an operator: an attribute comes before it (e.g. userName ${attribute} "…")`
    }
    if (!OPERATORS.has(op)) {
      return operator === ''
        ? `"${attribute}" needs an operator and a value after it (e.g. ${attribute} eq "…")`
        : `"${operator}" is not an operator: use eq, ne, co, sw, ew, gt, ge, lt, le or pr`
    }
    if (op === 'pr') { i -= 1; continue }
    if (value === undefined) return `"${attribute} ${operator}" needs a value after it`
    if (!/^(".*"|true|false|null|-?\d+(\.\d+)?([eE][+-]?\d+)?)$/.test(value)) {
      return `the value ${value} must be a quoted string, true, false, null or a number`
    }
  }
  return 'it does not follow the filter grammar (attribute operator value, joined by and, or, not; RFC 7644 §3.4.2.2)'
}

/**
 * `filter` as a WHERE clause whose parameters are numbered from `firstParam` (`$3`, …) and
 * returned in order.
 */
export function filterToSql (
  text: string, columns: FilterColumns, firstParam: number, special: FilterSpecial = {}
): SqlFilter {
  const params: unknown[] = []
  const param = (v: unknown) => { params.push(v); return `$${firstParam + params.length - 1}` }
  const attr = (path: string) => path.replace(CORE_PREFIX, '').toLowerCase()

  const walk = (f: Filter, prefix: string): string => {
    switch (f.op) {
      case 'and': case 'or':
        return '(' + f.filters.map(x => walk(x, prefix)).join(f.op === 'and' ? ' AND ' : ' OR ') + ')'
      case 'not': return `(NOT ${walk(f.filter, prefix)})`
      case '[]': return walk(f.valFilter, `${attr(f.attrPath)}.`)
      case 'pr': {
        const column = columns[prefix + attr(f.attrPath)]
        if (column === undefined) throw invalid(`${f.attrPath} is not an attribute this filter can compare`)
        if (column.kind === 'bool') return 'TRUE'
        if (column.kind === 'uuid') return `(${column.sql} IS NOT NULL)`
        return `(${column.sql} IS NOT NULL AND ${column.sql} <> '')`
      }
      default: {
        const name = prefix + attr(f.attrPath)
        const value = f.compValue
        const custom = special[name]
        if (custom !== undefined) {
          if (f.op !== 'eq' || typeof value !== 'string') throw invalid(`${f.attrPath} takes eq "…" only`)
          return custom(param(value))
        }
        const column = columns[name]
        if (column === undefined) throw invalid(`${f.attrPath} is not an attribute this filter can compare`)
        return compare(column, f.op, value, param, f.attrPath)
      }
    }
  }
  return { where: walk(parseFilter(text), ''), params }
}

const LIKE = { co: (v: string) => `%${v}%`, sw: (v: string) => `${v}%`, ew: (v: string) => `%${v}` }
const escapeLike = (v: string) => v.replace(/[\\%_]/g, m => `\\${m}`)

function compare (
  column: FilterColumn, op: string, value: unknown, param: (v: unknown) => string, attrPath: string
): string {
  if (column.kind === 'bool') {
    // Entra ID writes booleans as strings in places; a filter may too.
    const b = typeof value === 'string' ? value.toLowerCase() : value
    const truth = b === true || b === 'true' ? true : b === false || b === 'false' ? false : null
    if (truth === null || (op !== 'eq' && op !== 'ne')) {
      throw invalid(`${attrPath} compares with eq or ne to true or false`)
    }
    return (op === 'eq') === truth ? `(${column.sql})` : `(NOT (${column.sql}))`
  }
  if (typeof value !== 'string') throw invalid(`${attrPath} compares with a string`)
  if (column.kind === 'uuid' && (op === 'eq' || op === 'ne')) {
    if (!isUuid(value)) return op === 'eq' ? 'FALSE' : 'TRUE'
    return `${column.sql} ${op === 'eq' ? '=' : 'IS DISTINCT FROM'} ${param(value.toLowerCase())}::uuid`
  }
  const left = column.kind === 'ci'
    ? `lower(${column.sql})`
    : column.kind === 'uuid' ? `${column.sql}::text` : column.sql
  const v = column.kind === 'text' ? value : value.toLowerCase()
  switch (op) {
    case 'eq': return `${left} = ${param(v)}`
    case 'ne': return `${left} IS DISTINCT FROM ${param(v)}`
    case 'co': case 'sw': case 'ew':
      return `${left} LIKE ${param(LIKE[op](escapeLike(v)))}`
    default: throw invalid(`${op} is not supported on ${attrPath}`)
  }
}
