import type { JSX } from 'preact'
import type { ScreenProps } from './screen.js'
import type { WordKey } from './i18n.js'

// The route table: each screen at its path, its title, who may open it, and the other names it
// answers to — the API's (/console/invite-requests is the Invite requests screen). The service
// answers the same paths with the console's page (src/console/page.ts) and any other with 404.
//
// Each screen is its own chunk (the build splits at these import()s: scripts/lib/console-build.ts),
// fetched the first time it is opened: a first load downloads the shell and the screen it opens,
// not the other twelve (issue 43's 25 kB on the wire). hooks/use-screen.ts loads it (the app shows a
// line while it loads), components/screen-load-failed.tsx a failure with a way to try again.

export type Screen = (props: ScreenProps) => JSX.Element

export interface Route {
  path: string
  /** Its title's words (i18n.ts). */
  title: WordKey
  adminOnly: boolean
  /** The screen's chunk, fetched once (the browser keeps the module), giving its component. */
  load: () => Promise<Screen>
  /**
   * The screen's own words: `console-<words>.json` of the reader's language's catalogue
   * (i18n.ts, loadScreenWords), fetched beside its chunk. None: the shell's words are its words.
   */
  words?: string
  /** Other paths of the same screen, shown under `path`. */
  aliases: string[]
}

export const ROUTES: Route[] = [
  // An admin lands on the overview of what waits; a member on their profile (PROFILE below).
  { path: '/', title: 'screenOverview', adminOnly: true, load: async () => (await import('./screens/overview.js')).Overview, words: 'overview', aliases: ['/console', '/console/overview'] },
  { path: '/console/members', title: 'screenMembers', adminOnly: true, load: async () => (await import('./screens/members.js')).Members, words: 'members', aliases: ['/console/users'] },
  { path: '/console/invitations', title: 'screenInvitations', adminOnly: true, load: async () => (await import('./screens/invitations.js')).Invitations, words: 'invitations', aliases: [] },
  { path: '/console/invite-links', title: 'screenInviteLinks', adminOnly: true, load: async () => (await import('./screens/invite-links.js')).InviteLinks, words: 'invite-links', aliases: [] },
  { path: '/console/requests', title: 'screenRequests', adminOnly: true, load: async () => (await import('./screens/requests.js')).Requests, words: 'requests', aliases: ['/console/invite-requests'] },
  { path: '/console/api-keys', title: 'screenApiKeys', adminOnly: true, load: async () => (await import('./screens/api-keys.js')).ApiKeys, words: 'api-keys', aliases: [] },
  { path: '/console/webhooks', title: 'screenWebhooks', adminOnly: true, load: async () => (await import('./screens/webhooks.js')).Webhooks, words: 'webhooks', aliases: ['/console/webhook-endpoints'] },
  { path: '/console/domains', title: 'screenDomains', adminOnly: true, load: async () => (await import('./screens/domains.js')).Domains, words: 'domains', aliases: [] },
  { path: '/console/directory', title: 'screenDirectory', adminOnly: true, load: async () => (await import('./screens/directory.js')).Directory, words: 'directory', aliases: [] },
  { path: '/console/sso', title: 'screenSso', adminOnly: true, load: async () => (await import('./screens/sso.js')).Sso, words: 'sso', aliases: ['/console/sso-connections'] },
  { path: '/console/activity', title: 'screenActivity', adminOnly: true, load: async () => (await import('./screens/activity.js')).Activity, words: 'activity', aliases: ['/console/audit-events'] },
  { path: '/console/settings', title: 'screenSettings', adminOnly: true, load: async () => (await import('./screens/settings.js')).Settings, words: 'settings', aliases: ['/console/workspace'] },
  { path: '/console/profile', title: 'screenProfile', adminOnly: false, load: async () => (await import('./screens/profile.js')).Profile, words: 'profile', aliases: ['/console/me'] }
]

/** A member's landing, and every member's one screen. */
export const PROFILE = ROUTES[ROUTES.length - 1] as Route

/**
 * The screen at `path` (a trailing slash or an alias included) for an admin or a member;
 * undefined: no screen is there. A member's landing (`/`) is their profile.
 */
export function routeAt (path: string, admin: boolean): Route | undefined {
  const p = path.length > 1 ? path.replace(/\/+$/, '') : path
  const route = ROUTES.find(r => r.path === p || r.aliases.includes(p))
  return route?.path === '/' && !admin ? PROFILE : route
}
