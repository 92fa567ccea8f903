import type { Queryable } from './client.js'

// What a page before sign-in reads of the link it was opened from (src/i18n/page-locale.ts): the
// link's workspace, that workspace's default language and time zone, and the language the link
// was made in. Reads only.

export type PageLinkKind = 'invitation' | 'invite-link' | 'domain-join' | 'login-link'

export interface PageLinkRow {
  workspaceId: string
  linkLocale: string | null
  workspaceLocale: string
  timeZone: string
}

const WORKSPACE = 'w.id AS "workspaceId", w.locale AS "workspaceLocale", w.time_zone AS "timeZone"'

/** Per kind of link: the query from its token's hash to its workspace and the locale it was made in. */
const LINK_QUERIES: Record<PageLinkKind, string> = {
  invitation: `SELECT ${WORKSPACE}, i.locale AS "linkLocale"
    FROM invitations i JOIN workspaces w ON w.id = i.workspace_id WHERE i.token_hash = $1`,
  'invite-link': `SELECT ${WORKSPACE}, l.locale AS "linkLocale"
    FROM invite_links l JOIN workspaces w ON w.id = l.workspace_id WHERE l.code_hash = $1`,
  // A domain join link is made for an address, not in a language: the workspace's default applies.
  'domain-join': `SELECT ${WORKSPACE}, NULL AS "linkLocale"
    FROM domain_join_tokens t JOIN workspace_domains d ON d.id = t.domain_id JOIN workspaces w ON w.id = d.workspace_id
    WHERE t.token_hash = $1`,
  // A sign-in link is its account's: the language that member chose.
  'login-link': `SELECT ${WORKSPACE}, u.locale AS "linkLocale"
    FROM login_tokens t JOIN users u ON u.id = t.user_id JOIN workspaces w ON w.id = u.workspace_id
    WHERE t.token_hash = $1`
}

/** The link of `kind` whose secret hashes to `tokenHash`, or null. */
export async function findPageLink (q: Queryable, kind: PageLinkKind, tokenHash: string): Promise<PageLinkRow | null> {
  const r = await q.query<PageLinkRow>(LINK_QUERIES[kind], [tokenHash])
  return r.rows[0] ?? null
}
