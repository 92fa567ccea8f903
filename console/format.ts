import type { Schemas } from './api.js'

// How values read on every screen: moments, doors, who invited.

/** The doors an action comes through, as the contract's `Source` names them (audit events, inviters). */
export const DOORS: Record<Schemas['Source'], string> = {
  web: 'web', api: 'API', mcp: 'MCP', chat: 'chat', system: 'system', directory: 'directory (SCIM)'
}

/**
 * A door in words; one this console does not know (`source` is open: a newer service may name
 * others) by its own name, never blank.
 */
export function doorOf (source: string): string {
  return (DOORS as Record<string, string | undefined>)[source] ?? source
}

/** Who invited, through which door: "Ada Lovelace (web)", "HR import (API)"; a dash when nobody did. */
export function inviterText (by: Schemas['Invitation']['inviter'] | undefined): string {
  return by == null ? '—' : `${by.name} (${doorOf(by.source)})`
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
