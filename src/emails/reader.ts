import type { Queryable } from '../db/client.js'
import { findLanguageSettings } from '../db/workspaces.js'
import { DEFAULT_LOCALE, matchLocale } from '../i18n/locales.js'
import { loadBranding } from '../workspaces/branding.js'
import type { Reader } from './shell.js'

/** What finding a reader needs of the configuration: the links' base and MAIL_FROM. */
export interface ReaderConfig { appUrl: string, smtp: { from: string } }

/**
 * Who reads an e-mail of a workspace, and in what: the first of `own` (the invitation's locale,
 * the member's) a catalogue serves, else the workspace's default, else English; dates in the
 * workspace's time zone; the workspace's look.
 */
export async function readerFor (
  q: Queryable, config: ReaderConfig, workspaceId: string, own: string | null | undefined
): Promise<Reader> {
  const language = await findLanguageSettings(q, workspaceId)
  const branding = await loadBranding(q, workspaceId, config.appUrl, config.smtp.from)
  return {
    locale: matchLocale(own) ?? matchLocale(language?.locale) ?? DEFAULT_LOCALE,
    timeZone: language?.timeZone ?? 'UTC',
    branding
  }
}
