import type { Config } from '../config.js'
import type { Clock } from '../clock.js'
import type { Database, Queryable } from '../db/client.js'
import type { Logger } from '../logger.js'
import type { Principal } from '../principal.js'
import { serviceError } from '../errors.js'
import { sealWith, type Keyring } from '../lib/crypto.js'
import type { OAuthStateRow } from '../db/oauth-states.js'
import { consumeBrowserOAuthState, issueOAuthState } from '../oauth/state.js'
import { findUserInWorkspace, type UserRow } from '../db/users.js'
import type { EventOutbox } from '../ports/event-outbox.js'
import {
  findChatInstallation, listSealedBotTokens, resealBotToken, upsertChatInstallation, type SealedBotToken
} from '../db/chat-installations.js'
import { encryptionKeyring, type SecretSettings } from '../lib/secret-keys.js'
import { pages, resealStore, type ResealCount } from '../lib/reseal.js'
import { SlackApiError, type OAuthAccess, type SlackWebApi } from './web-api.js'

// The Slack app's OAuth v2 install: a browser-bound state (src/oauth/state.ts) tied to the
// installing admin, the code exchanged for a bot token, and the installation stored with its
// token encrypted for its own team.

export type SlackConfig = NonNullable<Config['slack']>

/** Additional authenticated data for a bot token: a ciphertext only decrypts for its own team. */
export const botTokenContext = (teamId: string): string => `slack-bot-token:${teamId}`

interface InstallCallback {
  cookieState: string | undefined
  queryState: string | undefined
  code: string | undefined
  error: string | undefined
}

export interface SlackInstall {
  startInstall(actor: Principal): Promise<{ location: string, state: string }>
  completeInstall(input: InstallCallback): Promise<{ installationId: string, teamId: string }>
}

export interface SlackInstallDeps {
  db: Database
  clock: Clock
  log: Logger
  api: SlackWebApi
  events: EventOutbox
  /** Throws CHAT_PLATFORM_NOT_CONFIGURED when the app is not set up. */
  requireConfigured(): { slack: SlackConfig, key: Keyring }
}

const invalid = (reason: string) => serviceError('OAUTH_STATE_INVALID', [reason])

export function createSlackInstall (deps: SlackInstallDeps): SlackInstall {
  return {
    startInstall: async actor => await startInstall(deps, actor),
    completeInstall: async input => await completeInstall(deps, input)
  }
}

/** A fresh single-use state bound to the admin, and Slack's authorize URL carrying it. */
async function startInstall (deps: SlackInstallDeps, actor: Principal): Promise<{ location: string, state: string }> {
  const { db, clock } = deps
  const { slack } = deps.requireConfigured()
  const state = await issueOAuthState(
    db, clock.now(), 'slack', { workspaceId: actor.workspaceId, userId: actor.userId }
  )
  const url = new URL(slack.authorizeUrl)
  url.searchParams.set('client_id', slack.clientId)
  url.searchParams.set('scope', slack.scopes.join(','))
  url.searchParams.set('redirect_uri', slack.redirectUri)
  url.searchParams.set('state', state)
  return { location: url.toString(), state }
}

async function completeInstall (
  deps: SlackInstallDeps,
  input: InstallCallback
): Promise<{ installationId: string, teamId: string }> {
  const { db, clock, log } = deps
  const { slack, key } = deps.requireConfigured()
  const bound = await consumeBrowserOAuthState(db, clock.now(), 'slack', input)
  if (input.error !== undefined) {
    // Slack's error codes are short snake_case words; anything else is not echoed back.
    const slackError = /^[a-z_]{1,64}$/.test(input.error) ? input.error : 'unknown'
    throw serviceError('OAUTH_STATE_INVALID', [`the install was not approved at Slack: ${slackError}`], { slackError })
  }
  if (input.code === undefined || input.code === '') throw invalid('Slack sent no authorization code')
  const admin = await installingAdmin(db, bound)
  const access = await exchangeCode(deps, slack, input.code)
  const row = await db.transaction(
    async tx => await saveInstallation(tx, clock.now(), { key, admin, access, events: deps.events })
  )
  log.info({ teamId: row.teamId, workspaceId: admin.workspaceId, reinstall: !row.created }, 'slack: app installed')
  return { installationId: row.id, teamId: row.teamId }
}

/** The admin the state was issued to, if they still are one. */
async function installingAdmin (db: Queryable, bound: OAuthStateRow): Promise<UserRow> {
  if (bound.workspaceId === null || bound.userId === null) throw invalid('the state is not bound to an admin')
  const admin = await findUserInWorkspace(db, bound.workspaceId, bound.userId)
  if (admin === null || admin.status !== 'active' || admin.role !== 'admin') {
    throw invalid(
      'the installing user is no longer an admin'
    )
  }
  return admin
}

async function exchangeCode ({ api, log }: SlackInstallDeps, slack: SlackConfig, code: string): Promise<OAuthAccess> {
  try {
    return await api.oauthV2Access({
      clientId: slack.clientId,
      clientSecret: slack.clientSecret,
      code,
      redirectUri: slack.redirectUri
    })
  } catch (err) {
    if (!(err instanceof SlackApiError)) throw err
    log.warn({ slackError: err.slackError }, 'slack: oauth.v2.access failed')
    throw serviceError('UPSTREAM_FAILED', ['Slack API'])
  }
}

/**
 * Stores (or renews) the installation with its encrypted bot token, and audits it; when the Slack
 * team moves to another workspace, the old one loses it and its trail says so.
 */
async function saveInstallation (
  tx: Queryable,
  now: Date,
  input: { key: Keyring, admin: UserRow, access: OAuthAccess, events: EventOutbox }
) {
  const { key, admin, access } = input
  const workspaceId = admin.workspaceId
  const previous = await findChatInstallation(tx, 'slack', access.teamId, { forUpdate: true })
  const inst = await upsertChatInstallation(tx, {
    workspaceId,
    platform: 'slack',
    teamId: access.teamId,
    teamName: access.teamName,
    botUserId: access.botUserId,
    appId: access.appId,
    scopes: access.scope,
    botTokenEnc: sealWith(key, access.accessToken, botTokenContext(access.teamId)),
    installedBy: admin.id,
    now
  })
  // Installed through the browser's OAuth round trip: the web door.
  const actor = { type: 'user' as const, id: admin.id, label: admin.email, source: 'web' as const, requestId: null }
  const target = { type: 'chat_installation' as const, id: inst.id }
  await input.events.record(tx, {
    workspaceId,
    action: 'chat.installed',
    actor,
    target,
    payload: {
      platform: 'slack',
      teamId: access.teamId,
      teamName: access.teamName,
      scopes: access.scope,
      reinstall: !inst.created
    },
    now
  })
  if (previous !== null && previous.active && previous.workspaceId !== workspaceId) {
    await input.events.record(tx, {
      workspaceId: previous.workspaceId,
      action: 'chat.uninstalled',
      actor,
      target,
      payload: { platform: 'slack', teamId: access.teamId, reason: 'installed_in_another_workspace' },
      now
    })
  }
  return inst
}

/** Re-seals every bot token a previous ENCRYPTION_KEY sealed under the current one (npm run secrets:reencrypt). */
export async function resealBotTokens (db: Queryable, config: SecretSettings): Promise<ResealCount | null> {
  const ring = encryptionKeyring(config)
  if (ring === null) return null
  return await resealStore({
    store: 'Slack bot tokens',
    ring,
    rows: pages<SealedBotToken>(async (after, limit) => await listSealedBotTokens(db, after?.id.id ?? null, limit)),
    contexts: { botTokenEnc: id => botTokenContext(id.teamId) },
    write: async (id, _column, from, to) => await resealBotToken(db, id.id, from, to)
  })
}
