import type { Ports } from '../ports/index.js'
import type { Queryable } from '../db/client.js'
import { hashToken } from '../lib/tokens.js'
import { findPageLink, type PageLinkRow } from '../db/page-links.js'
import type { PageBranding } from '../http/page-shell.js'
import type { Locale } from './locales.js'
import { negotiateLocale } from './negotiate.js'

// What a page before sign-in knows of its reader before it is written: the language (the link's,
// else Accept-Language, else the workspace's default: src/i18n/negotiate.ts) and, when the link
// names a workspace, that workspace's look and time zone. Reads only: opening a page records
// nothing (scanners open links); a token that names nothing is a page in the browser's language
// without a workspace, exactly like no token (the page's script then says the link is not valid).

/** The link a page was opened from: what the page's URL carries. */
export type PageLink =
  | { kind: 'invitation', token: string | undefined }
  | { kind: 'invite-link', code: string }
  | { kind: 'domain-join', token: string | undefined }
  | { kind: 'login-link', token: string | undefined }
  | { kind: 'none' }

interface PageContext {
  locale: Locale
  /** The workspace's look; null when the page does not know its workspace. */
  branding: PageBranding | null
  /** The workspace's IANA time zone (dates the page writes); UTC without a workspace. */
  timeZone: string
}

async function findLink (q: Queryable, link: PageLink): Promise<PageLinkRow | null> {
  if (link.kind === 'none') return null
  const secret = link.kind === 'invite-link' ? link.code : link.token
  if (secret === undefined || secret === '') return null
  return await findPageLink(q, link.kind, hashToken(secret))
}

export interface PageContextService {
  /** The language, look and time zone of a page opened from `link` with this Accept-Language. */
  forPage(link: PageLink, acceptLanguage: string | undefined): Promise<PageContext>
}

/**
 * `loadLook` is the workspaces' (src/workspaces/branding.ts `loadBranding`), passed in by
 * src/services.ts: the language of pages sits below the features.
 */
export function createPageContextService (
  deps: Pick<Ports, 'db' | 'config'> & {
    loadLook: (q: Queryable, workspaceId: string, appUrl: string) => Promise<PageBranding>
  }
): PageContextService {
  return {
    async forPage (link, acceptLanguage) {
      const row = await findLink(deps.db, link)
      const locale = negotiateLocale({ link: row?.linkLocale, acceptLanguage, workspace: row?.workspaceLocale })
      if (row === null) return { locale, branding: null, timeZone: 'UTC' }
      const branding = await deps.loadLook(deps.db, row.workspaceId, deps.config.appUrl)
      return { locale, branding, timeZone: row.timeZone }
    }
  }
}
