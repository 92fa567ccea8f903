import type { Schemas } from './api.js'
import { readerLanguage, t } from './i18n.js'

// How values read on every screen: moments, doors, who invited, in the reader's language.

type Door = Schemas['Source']
const SOURCES: Door[] = ['web', 'api', 'mcp', 'chat', 'system', 'directory']

/**
 * A door in words (the message `door`); one this console does not know (`source` is open: a newer
 * service may name others) by its own name, never blank.
 */
export function doorOf (source: string): string {
  return t('door', { door: source })
}

/**
 * The doors an action comes through, as the contract's `Source` names them (audit events,
 * inviters): each read in the reader's language when it is read (the words load after this module).
 */
export const DOORS = Object.defineProperties({}, Object.fromEntries(
  SOURCES.map(door => [door, { enumerable: true, get: () => doorOf(door) }])
)) as Readonly<Record<Door, string>>

/** Who invited, through which door: "Ada Lovelace (web)", "HR import (API)"; a dash when nobody did. */
export function inviterText (by: Schemas['Invitation']['inviter'] | undefined): string {
  return by == null ? '—' : t('inviter', { name: by.name, door: doorOf(by.source) })
}

/**
 * A moment, short, as the reader's language writes it: the year only when it is not this one. The
 * date and the time each stay on one line (no-break spaces inside), so a narrow column wraps
 * between them and nowhere else.
 */
export function when (iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return '—'
  const d = new Date(iso)
  const thisYear = d.getFullYear() === new Date().getFullYear()
  const date = d.toLocaleDateString(readerLanguage(), { ...(thisYear ? {} : { year: 'numeric' }), month: 'short', day: 'numeric' })
  const time = d.toLocaleTimeString(readerLanguage(), { hour: '2-digit', minute: '2-digit' })
  return `${date.replace(/\s/g, '\u00a0')} ${time.replace(/\s/g, '\u00a0')}`
}
