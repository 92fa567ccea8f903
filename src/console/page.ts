import { htmlPage, type Page } from '../http/page-shell.js'
import { escapeHtml } from '../lib/html.js'
import { translate } from '../i18n/messages.js'
import { negotiateLocale } from '../i18n/negotiate.js'
import { pageLook } from '../i18n/page-words.js'
import { consoleAssets } from './assets.js'

// The admin console's page: one HTML shell for `/` and every `/console/{screen}`. The screens are
// drawn by the bundle (console/ → dist/console/, built by `npm run build`), which talks to the API
// only through the contract's operations. The shell links the console's styles and loads its
// script under their content-hashed names (GET /static/{asset}, cached for good: src/console/
// assets.ts), both under the response's nonce, like the other pages. The script is an ES module:
// the chunks it imports (the shared code, each screen's when opened) are fetched under the same
// nonce, which a module script passes to its imports and import()s. The page itself is no-store.
// Until the bundle knows who reads (their own language, the workspace's: console/i18n.ts), the
// page is in the browser's language (Accept-Language), its title and "Loading …" line from the
// console's catalogue.

/**
 * Each screen's title (its message in the catalogues' console namespace); the bundle sets the
 * same one (with the workspace's name) once it runs. The same names as the console's route table
 * (console/routes.ts), aliases included.
 */
const SCREEN_TITLES: Record<string, string> = {
  home: 'console.workspace',
  members: 'console.screenMembers',
  invitations: 'console.screenInvitations',
  'invite-links': 'console.screenInviteLinks',
  requests: 'console.screenRequests',
  'api-keys': 'console.screenApiKeys',
  webhooks: 'console.screenWebhooks',
  activity: 'console.screenActivity',
  settings: 'console.screenSettings',
  domains: 'console.screenDomains',
  directory: 'console.screenDirectory',
  sso: 'console.screenSso',
  profile: 'console.screenProfile'
}
/** The API's names of the screens (/console/invite-requests is the Invite requests screen). */
const ALIASES: Record<string, string> = {
  overview: 'home',
  me: 'profile',
  users: 'members',
  'invite-requests': 'requests',
  'webhook-endpoints': 'webhooks',
  'audit-events': 'activity',
  workspace: 'settings',
  'sso-connections': 'sso'
}

/** Whether the console has a screen of that name (an alias included). */
export function isConsoleScreen (screen: string): boolean {
  return Object.hasOwn(SCREEN_TITLES, ALIASES[screen] ?? screen)
}

export function consolePage (opts: {
  screen: string, identityProvider: boolean, publicUrl: string, acceptLanguage: string | undefined
}): Page {
  // Missing means the console was never built (npm run build).
  const assets = consoleAssets()
  const styles = { href: `/static/${assets['console.css']}` }
  const locale = negotiateLocale({ acceptLanguage: opts.acceptLanguage })
  const title = translate(locale, SCREEN_TITLES[ALIASES[opts.screen] ?? opts.screen] ?? 'console.notFound')
  const loading = translate(locale, 'console.loadingScreen', { title })
  // The public address (PUBLIC_URL) is what the Directory screen gives a company directory.
  return htmlPage(title, styles, nonce => `<div id="app" data-identity-provider="${
    opts.identityProvider ? 'yes' : 'no'}" data-public-url="${
    escapeHtml(opts.publicUrl)}"><p class="muted">${escapeHtml(loading)}</p></div>
<script type="module" nonce="${nonce}" src="/static/${assets['console.js']}"></script>`, pageLook({ locale }))
}

/** The icon of every page: a small square with a "W", 0.3 kB. */
export const FAVICON_SVG = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">' +
  '<rect width="32" height="32" rx="6" fill="#1f4e8c"/>' +
  '<path d="M6 9h3.2l2.3 10 2.9-10h3.2l2.9 10 2.3-10H26l-4 14h-3.2L16 13.6 13.2 23H10z" fill="#fff"/></svg>'
