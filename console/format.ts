import type { Schemas } from './api.js'

// How values read on every screen: moments, doors, who invited.

/** The door an action came through, as the contract's `source` names it (audit events, inviters). */
export const DOORS: Record<Schemas['AuditEvent']['source'], string> = {
  web: 'web', api: 'API', mcp: 'MCP', chat: 'chat', system: 'system', directory: 'directory (SCIM)'
}

/** Who invited, through which door: "ada@example.com (web)"; a dash when nobody did. */
export function inviterText (by: { email: string | null, source: Schemas['AuditEvent']['source'] } | null | undefined): string {
  return by == null ? '—' : `${by.email ?? 'the service'} (${DOORS[by.source]})`
}

/**
 * A moment, short: the year only when it is not this one. The date and the time each stay on one
 * line (no-break spaces inside), so a narrow column wraps between them and nowhere else.
 */
export function when (iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return '—'
  const d = new Date(iso)
  const thisYear = d.getFullYear() === new Date().getFullYear()
  const date = d.toLocaleDateString([], { ...(thisYear ? {} : { year: 'numeric' }), month: 'short', day: 'numeric' })
  const time = d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
  return `${date.replace(/\s/g, '\u00a0')} ${time.replace(/\s/g, '\u00a0')}`
}
