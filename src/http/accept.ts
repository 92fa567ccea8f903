// Content negotiation between a page and JSON for the operations a browser navigates to (the SSO
// sign-in's start and callbacks): a browser's navigation asks for text/html first, an API client
// for application/json or anything (*/*). Only a clear preference for HTML gets the page, so every
// client that does not say so keeps the JSON answer.

interface MediaRange { type: string, subtype: string, q: number }

/** The ranges of an Accept header (RFC 9110 §12.5.1); a malformed one is skipped. */
function mediaRanges (accept: string): MediaRange[] {
  const ranges: MediaRange[] = []
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part.split(';').map(s => s.trim().toLowerCase())
    const [type, subtype, extra] = range.split('/')
    if (type === undefined || type === '' || subtype === undefined || subtype === '' || extra !== undefined) continue
    let q = 1
    for (const param of params) {
      const [name, value] = param.split('=').map(s => s.trim())
      if (name !== 'q' || value === undefined) continue
      q = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(value) ? Number(value) : 0
    }
    ranges.push({ type, subtype, q })
  }
  return ranges
}

/** The quality the header gives `type/subtype`: its most specific matching range's q, 0 if none matches. */
function qualityOf (ranges: MediaRange[], type: string, subtype: string): number {
  let best = { specificity: -1, q: 0 }
  for (const r of ranges) {
    const specificity = r.type === type && r.subtype === subtype
      ? 2
      : r.type === type && r.subtype === '*' ? 1 : r.type === '*' && r.subtype === '*' ? 0 : -1
    // Equally specific ranges (`text/html;level=1, text/html`): the higher q counts.
    if (specificity > best.specificity || (specificity === best.specificity && r.q > best.q)) {
      best = { specificity, q: r.q }
    }
  }
  return best.specificity < 0 ? 0 : best.q
}

/**
 * Whether the request's Accept prefers text/html over application/json: a browser navigation
 * (`text/html,…,*\/*;q=0.8`). No header, `*\/*`, `application/json`, or a tie: false (JSON).
 */
export function prefersHtml (accept: string | undefined): boolean {
  if (accept === undefined || accept === '') return false
  const ranges = mediaRanges(accept)
  return qualityOf(ranges, 'text', 'html') > qualityOf(ranges, 'application', 'json')
}

/**
 * Which of `offered` (media types, the server's preference first) the Accept header takes: the one
 * of highest quality, the earlier on a tie; no header: the first; null when it takes none (406).
 */
export function negotiate<T extends string> (accept: string | undefined, offered: readonly T[]): T | null {
  if (accept === undefined || accept.trim() === '') return offered[0] ?? null
  const ranges = mediaRanges(accept)
  let best: { type: T, q: number } | null = null
  for (const type of offered) {
    const [main = '', sub = ''] = type.split('/')
    const q = qualityOf(ranges, main, sub)
    if (q > 0 && (best === null || q > best.q)) best = { type, q }
  }
  return best?.type ?? null
}
