// What PostgreSQL's jsonb (and text) cannot hold: the character U+0000 and UTF-16 code units
// that are half a surrogate pair. JSON allows both (as \u0000 and \ud800 escapes), so a payload
// from outside may carry them in any string or key. jsonbSafe copies a parsed JSON value with
// each such character replaced by U+FFFD, and says whether anything changed, so that a caller
// can keep the exact value beside the copy (JSON.stringify escapes both: its text is storable).

export type JsonbSafe =
  | { ok: true, value: unknown, changed: boolean }
  | { ok: false, reason: 'too deep' }

// U+0000, a high surrogate not followed by a low one, a low surrogate not preceded by a high one
// (no `u` flag: the pattern works on UTF-16 code units).
// eslint-disable-next-line no-control-regex -- U+0000 is the point
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

const safeString = (s: string): string => s.replace(UNSTORABLE, '\uFFFD')

/**
 * A copy of `value` (a parsed JSON value) that jsonb accepts, or `too deep` when arrays and
 * objects nest more than `maxDepth` levels (checked before anything recurses further).
 */
export function jsonbSafe (value: unknown, maxDepth: number): JsonbSafe {
  let changed = false
  const copy = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') {
      const s = safeString(v)
      if (s !== v) changed = true
      return s
    }
    if (typeof v !== 'object' || v === null) return v
    if (depth >= maxDepth) throw TOO_DEEP
    if (Array.isArray(v)) return v.map(item => copy(item, depth + 1))
    const out: Record<string, unknown> = {}
    for (const [k, item] of Object.entries(v)) {
      const key = safeString(k)
      if (key !== k) changed = true
      out[key] = copy(item, depth + 1)
    }
    return out
  }
  try {
    const safe = copy(value, 0)
    return { ok: true, value: safe, changed }
  } catch (err) {
    if (err === TOO_DEEP) return { ok: false, reason: 'too deep' }
    throw err
  }
}

const TOO_DEEP = new Error('too deep')
