import type { JSX } from 'preact'
import type { ScreenProps } from './screen.js'
import { Members } from './screens/members.js'
import { Invitations } from './screens/invitations.js'
import { Requests } from './screens/requests.js'
import { InviteLinks } from './screens/invite-links.js'
import { ApiKeys } from './screens/api-keys.js'
import { Webhooks } from './screens/webhooks.js'
import { Activity } from './screens/activity.js'
import { Settings } from './screens/settings.js'
import { Domains } from './screens/domains.js'
import { Directory } from './screens/directory.js'
import { Profile } from './screens/profile.js'
import { Overview } from './screens/overview.js'

// The route table: each screen at its path, its title, who may open it, and the other names it
// answers to — the API's (/console/invite-requests is the Invite requests screen). The service
// answers the same paths with the console's page (src/console/page.ts) and any other with 404.

export interface Route {
  path: string
  title: string
  adminOnly: boolean
  view: (props: ScreenProps) => JSX.Element
  /** Other paths of the same screen, shown under `path`. */
  aliases: string[]
}

export const ROUTES: Route[] = [
  // An admin lands on the overview of what waits; a member on their profile (PROFILE below).
  { path: '/', title: 'Overview', adminOnly: true, view: Overview, aliases: ['/console', '/console/overview'] },
  { path: '/console/members', title: 'Members', adminOnly: true, view: Members, aliases: ['/console/users'] },
  { path: '/console/invitations', title: 'Invitations', adminOnly: true, view: Invitations, aliases: [] },
  { path: '/console/invite-links', title: 'Invite links', adminOnly: true, view: InviteLinks, aliases: [] },
  { path: '/console/requests', title: 'Invite requests', adminOnly: true, view: Requests, aliases: ['/console/invite-requests'] },
  { path: '/console/api-keys', title: 'API keys', adminOnly: true, view: ApiKeys, aliases: [] },
  { path: '/console/webhooks', title: 'Webhooks', adminOnly: true, view: Webhooks, aliases: ['/console/webhook-endpoints'] },
  { path: '/console/domains', title: 'Domains', adminOnly: true, view: Domains, aliases: [] },
  { path: '/console/directory', title: 'Directory', adminOnly: true, view: Directory, aliases: [] },
  { path: '/console/activity', title: 'Activity', adminOnly: true, view: Activity, aliases: ['/console/audit-events'] },
  { path: '/console/settings', title: 'Settings', adminOnly: true, view: Settings, aliases: ['/console/workspace'] },
  { path: '/console/profile', title: 'Profile', adminOnly: false, view: Profile, aliases: ['/console/me'] }
]

/** A member's landing, and every member's one screen. */
const PROFILE = ROUTES[ROUTES.length - 1] as Route

/**
 * The screen at `path` (a trailing slash or an alias included) for an admin or a member;
 * undefined: no screen is there. A member's landing (`/`) is their profile.
 */
export function routeAt (path: string, admin: boolean): Route | undefined {
  const p = path.length > 1 ? path.replace(/\/+$/, '') : path
  const route = ROUTES.find(r => r.path === p || r.aliases.includes(p))
  return route?.path === '/' && !admin ? PROFILE : route
}
