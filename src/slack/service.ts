import type { Config } from '../config.js'
import type { Clock } from '../clock.js'
import type { Database } from '../db/client.js'
import type { Logger } from '../logger.js'
import type { Principal } from '../principal.js'
import { isServiceError, serviceError } from '../errors.js'
import { randomToken, hashToken, safeEqual } from '../lib/tokens.js'
import { encryptSecret, decryptSecret } from '../lib/crypto.js'
import { consumeOAuthState, insertOAuthState } from '../db/oauth-states.js'
import { findUserByEmail, findUserInWorkspace } from '../db/users.js'
import { insertAuditEvent } from '../db/audit-events.js'
import { deactivateChatInstallation, findChatInstallation, upsertChatInstallation, type ChatInstallationRow } from '../db/chat-installations.js'
import { claimChatEvent, finishChatEvent, insertChatEvent, listClaimableChatEvents, type ChatEventStatus } from '../db/chat-events.js'
import { checkSlackSignature } from './signature.js'
import { createSlackWebApi, SlackApiError, type SlackWebApi } from './web-api.js'
import { escapeSlackText, HELP_TEXT, parseCommand } from './commands.js'

// The Slack app: OAuth v2 install, signed event intake, and the bot that lets a workspace admin
// invite people from Slack. Events are recorded before they are acknowledged and processed
// afterwards by an in-process queue; rows still 'received' are picked up again on start-up and
// by a periodic sweep, so an event that was acknowledged is never lost to a restart.

export const SLACK_STATE_COOKIE = 'slack_oauth_state'
export const SLACK_STATE_COOKIE_PATH = '/api/oauth/slack'
export const SLACK_STATE_TTL_SECONDS = 10 * 60

/** A claimed event whose worker died is claimable again after this long. */
const CLAIM_LEASE_MS = 2 * 60_000
const SWEEP_INTERVAL_MS = 60_000
const SWEEP_BATCH = 500

/** What the bot needs from the invitations service (src/invitations/service.ts). */
export interface InvitationsPort {
  invite(actor: Principal, input: { email: string, role: 'admin' | 'member' }): Promise<{ success: boolean, message: string, invitationId?: string, invitationUrl?: string }>
}

export interface SlackEnvelope {
  type: string
  team_id?: string
  event_id?: string
  event?: Record<string, unknown>
  [key: string]: unknown
}

export interface SlackService {
  readonly configured: boolean
  /** The slackSignature security scheme: throws CHAT_PLATFORM_NOT_CONFIGURED or SIGNATURE_INVALID. */
  verifySignature(request: { headers: Record<string, string | string[] | undefined>, rawBody: Buffer | null }): void
  /** A fresh single-use state bound to the admin; the caller puts it in the browser's cookie. */
  startInstall(actor: Principal): Promise<{ location: string, state: string }>
  completeInstall(input: { cookieState: string | undefined, queryState: string | undefined, code: string | undefined, error: string | undefined }): Promise<{ installationId: string, teamId: string }>
  /** Record an event_callback durably; processing follows the acknowledgement. */
  receive(envelope: SlackEnvelope, meta: { retryNum?: string | undefined }): Promise<{ recorded: boolean }>
  /** Resolves when the queue is empty (tests, shutdown). */
  whenIdle(): Promise<void>
  close(): Promise<void>
}

export interface SlackDeps {
  config: Config
  db: Database
  clock: Clock
  log: Logger
  invitations: InvitationsPort
  api?: SlackWebApi
}

type Json = Record<string, unknown>
type Outcome = { status: Exclude<ChatEventStatus, 'received'>, error?: string }

const str = (v: unknown): string | null => typeof v === 'string' && v !== '' ? v : null
/** Additional authenticated data for a bot token: a ciphertext only decrypts for its own team. */
export const botTokenContext = (teamId: string): string => `slack-bot-token:${teamId}`

export function createSlackService (deps: SlackDeps): SlackService {
  const { config, db, clock, log } = deps
  const slack = config.slack
  const key = config.encryptionKey
  const api = deps.api ?? createSlackWebApi({ apiUrl: slack?.apiUrl ?? 'https://slack.com/api' })

  function requireConfigured (): { slack: NonNullable<Config['slack']>, key: Buffer } {
    if (slack === null || key === null) throw serviceError('CHAT_PLATFORM_NOT_CONFIGURED')
    return { slack, key }
  }

  // ---- the queue: one worker, events in arrival order ----
  const pending: string[] = []
  const queued = new Set<string>()
  let running: Promise<void> | null = null
  let sweeping: Promise<void> | null = null
  let closed = false

  function enqueue (eventId: string): void {
    if (closed || queued.has(eventId)) return
    queued.add(eventId)
    pending.push(eventId)
    running ??= drain()
  }

  async function drain (): Promise<void> {
    try {
      let eventId: string | undefined
      // Once closing, the rest stays 'received' in the database for the next start.
      while ((eventId = closed ? undefined : pending.shift()) !== undefined) {
        try {
          await processOne(eventId)
        } catch (err) {
          // Database trouble while claiming or finishing: the row stays 'received' for a sweep.
          log.error({ err, eventId }, 'slack: processing an event failed')
        } finally {
          queued.delete(eventId)
        }
      }
    } finally {
      running = null
    }
  }

  async function sweep (): Promise<void> {
    if (closed || sweeping !== null) return
    sweeping = (async () => {
      try {
        for (const eventId of await listClaimableChatEvents(db, clock.now(), CLAIM_LEASE_MS, SWEEP_BATCH)) enqueue(eventId)
      } catch (err) {
        log.warn({ err: (err as Error).message }, 'slack: sweeping unprocessed events failed; retrying later')
      } finally {
        sweeping = null
      }
    })()
    await sweeping
  }

  let timer: NodeJS.Timeout | undefined
  if (slack !== null && key !== null) {
    // sweep() catches and logs its own errors.
    sweep().catch(() => {})
    timer = setInterval(() => { sweep().catch(() => {}) }, SWEEP_INTERVAL_MS)
    timer.unref()
  }

  async function processOne (eventId: string): Promise<void> {
    const row = await claimChatEvent(db, eventId, clock.now(), CLAIM_LEASE_MS)
    if (row === null) return // done already, or another instance holds it
    let outcome: Outcome
    try {
      outcome = await handleEvent(row.payload as SlackEnvelope)
    } catch (err) {
      const note = err instanceof SlackApiError ? err.message : 'internal error'
      log.error({ err: err instanceof SlackApiError ? err.message : err, eventId }, 'slack: event processing failed')
      outcome = { status: 'failed', error: note }
    }
    await finishChatEvent(db, eventId, { ...outcome, now: clock.now() })
  }

  async function handleEvent (envelope: SlackEnvelope): Promise<Outcome> {
    const event = (envelope.event ?? {}) as Json
    const teamId = str(envelope.team_id)
    if (teamId === null) return { status: 'ignored', error: 'no team_id' }
    switch (event.type) {
      case 'app_uninstalled':
        return await uninstall(teamId, 'app_uninstalled')
      case 'tokens_revoked': {
        const bots = ((event.tokens as Json | undefined)?.bot ?? []) as unknown[]
        const inst = await findChatInstallation(db, 'slack', teamId)
        if (inst === null || bots.length === 0) return { status: 'ignored' }
        // Only our bot's token matters; user tokens are not used by this app.
        if (inst.botUserId !== null && !bots.includes(inst.botUserId)) return { status: 'ignored' }
        return await uninstall(teamId, 'tokens_revoked')
      }
      case 'app_mention':
        return await command(teamId, event)
      case 'message':
        // Direct messages from people only: not edits, joins or the bot's own replies.
        if (event.channel_type !== 'im' || event.bot_id !== undefined || event.subtype !== undefined) return { status: 'ignored' }
        return await command(teamId, event)
      default:
        return { status: 'ignored' }
    }
  }

  async function uninstall (teamId: string, reason: string): Promise<Outcome> {
    const done = await db.transaction(async tx => {
      const now = clock.now()
      const inst = await deactivateChatInstallation(tx, 'slack', teamId, now)
      if (inst === null) return false
      await insertAuditEvent(tx, {
        workspaceId: inst.workspaceId,
        action: 'chat.uninstalled',
        actor: { type: 'chat_platform', id: teamId, label: 'Slack' },
        target: { type: 'chat_installation', id: inst.id },
        payload: { platform: 'slack', teamId, reason },
        now
      })
      return true
    })
    log.info({ teamId, reason, deactivated: done }, 'slack: installation deactivated')
    return done ? { status: 'processed' } : { status: 'ignored', error: 'no active installation' }
  }

  async function command (teamId: string, event: Json): Promise<Outcome> {
    const { key } = requireConfigured()
    const inst = await findChatInstallation(db, 'slack', teamId)
    if (inst === null || !inst.active) return { status: 'ignored', error: 'no active installation' }
    const slackUser = str(event.user)
    const channel = str(event.channel)
    if (slackUser === null || channel === null || slackUser === inst.botUserId) return { status: 'ignored' }
    const token = decryptSecret(key, inst.botTokenEnc, botTokenContext(teamId))
    // Reply in the thread of the message (its parent when the message is itself a reply).
    const threadTs = str(event.thread_ts) ?? str(event.ts)
    const reply = async (text: string) => {
      await api.postMessage(token, { channel, text, ...(threadTs !== null ? { threadTs } : {}) })
    }

    const cmd = parseCommand(str(event.text) ?? '')
    if (cmd.kind === 'help') {
      await reply(HELP_TEXT)
      return { status: 'processed' }
    }
    const actor = await adminBehind(inst, await speakerEmail(token, slackUser))
    if (actor === null) {
      await reply('Sorry, only admins of this workspace can invite people. Ask one of your admins.')
      return { status: 'processed', error: 'refused: not an admin of the workspace' }
    }
    const who = escapeSlackText(cmd.email)
    try {
      const result = await deps.invitations.invite(actor, { email: cmd.email, role: cmd.role })
      // Never the signup link: it is a credential, and a channel has many readers.
      await reply(`Invited ${who} as ${cmd.role}. ${escapeSlackText(result.message)}`)
      return { status: 'processed' }
    } catch (err) {
      if (!isServiceError(err)) {
        log.error({ err, teamId }, 'slack: invite from chat failed')
        await reply(`Could not invite ${who}: something went wrong on our side. Try again later.`)
        return { status: 'failed', error: 'internal error while inviting' }
      }
      // Registry messages are written for clients (5xx ones carry no internals).
      await reply(`Could not invite ${who}: ${escapeSlackText(err.message)}`)
      return { status: 'processed', error: err.code }
    }
  }

  /** The speaker's e-mail; null when Slack will not tell (hidden, or no such user): a refusal. */
  async function speakerEmail (token: string, slackUser: string): Promise<string | null> {
    try {
      return await api.userEmail(token, slackUser)
    } catch (err) {
      if (!(err instanceof SlackApiError)) throw err
      log.warn({ slackError: err.slackError }, 'slack: users.info failed; treating the speaker as unknown')
      return null
    }
  }

  /** The active admin of the installation's workspace with this e-mail, as a chat principal. */
  async function adminBehind (inst: ChatInstallationRow, email: string | null): Promise<Principal | null> {
    if (email === null) return null
    const user = await findUserByEmail(db, email)
    if (user === null || user.status !== 'active' || user.role !== 'admin' || user.workspaceId !== inst.workspaceId) return null
    return { kind: 'chat', userId: user.id, workspaceId: user.workspaceId, email: user.email, name: user.name, role: 'admin', sessionId: null, apiKeyId: null }
  }

  return {
    configured: slack !== null && key !== null,

    verifySignature (request) {
      const { slack } = requireConfigured()
      const problem = checkSlackSignature({
        signingSecret: slack.signingSecret,
        signature: request.headers['x-slack-signature'],
        timestamp: request.headers['x-slack-request-timestamp'],
        rawBody: request.rawBody,
        now: clock.now()
      })
      if (problem !== null) {
        log.debug({ problem }, 'slack: request signature refused')
        throw serviceError('SIGNATURE_INVALID')
      }
    },

    async startInstall (actor) {
      const { slack } = requireConfigured()
      const state = randomToken()
      const now = clock.now()
      await insertOAuthState(db, {
        stateHash: hashToken(state),
        kind: 'slack',
        workspaceId: actor.workspaceId,
        userId: actor.userId,
        expiresAt: new Date(now.getTime() + SLACK_STATE_TTL_SECONDS * 1000),
        now
      })
      const url = new URL(slack.authorizeUrl)
      url.searchParams.set('client_id', slack.clientId)
      url.searchParams.set('scope', slack.scopes.join(','))
      url.searchParams.set('redirect_uri', slack.redirectUri)
      url.searchParams.set('state', state)
      return { location: url.toString(), state }
    },

    async completeInstall (input) {
      const { slack, key } = requireConfigured()
      const invalid = (reason: string) => serviceError('OAUTH_STATE_INVALID', [reason])
      if (input.queryState === undefined || input.queryState === '' || input.cookieState === undefined || input.cookieState === '') {
        throw invalid('the state is missing')
      }
      if (!safeEqual(input.cookieState, input.queryState)) throw invalid('the state does not belong to this browser')
      const bound = await consumeOAuthState(db, hashToken(input.queryState), 'slack', clock.now())
      if ('reason' in bound) {
        throw invalid({ unknown: 'the state is unknown', used: 'the state was already used', expired: 'the state has expired' }[bound.reason])
      }
      if (input.error !== undefined) {
        // Slack's error codes are short snake_case words; anything else is not echoed back.
        const slackError = /^[a-z_]{1,64}$/.test(input.error) ? input.error : 'unknown'
        throw serviceError('OAUTH_STATE_INVALID', [`the install was not approved at Slack: ${slackError}`], { slackError })
      }
      if (input.code === undefined || input.code === '') throw invalid('Slack sent no authorization code')
      if (bound.workspaceId === null || bound.userId === null) throw invalid('the state is not bound to an admin')
      const admin = await findUserInWorkspace(db, bound.workspaceId, bound.userId)
      if (admin === null || admin.status !== 'active' || admin.role !== 'admin') throw invalid('the installing user is no longer an admin')

      let access
      try {
        access = await api.oauthV2Access({ clientId: slack.clientId, clientSecret: slack.clientSecret, code: input.code, redirectUri: slack.redirectUri })
      } catch (err) {
        if (!(err instanceof SlackApiError)) throw err
        log.warn({ slackError: err.slackError }, 'slack: oauth.v2.access failed')
        throw serviceError('UPSTREAM_FAILED', ['Slack API'])
      }

      const workspaceId = bound.workspaceId
      const row = await db.transaction(async tx => {
        const now = clock.now()
        const previous = await findChatInstallation(tx, 'slack', access.teamId, { forUpdate: true })
        const inst = await upsertChatInstallation(tx, {
          workspaceId,
          platform: 'slack',
          teamId: access.teamId,
          teamName: access.teamName,
          botUserId: access.botUserId,
          appId: access.appId,
          scopes: access.scope,
          botTokenEnc: encryptSecret(key, access.accessToken, botTokenContext(access.teamId)),
          installedBy: admin.id,
          now
        })
        const actor = { type: 'user' as const, id: admin.id, label: admin.email }
        const target = { type: 'chat_installation' as const, id: inst.id }
        await insertAuditEvent(tx, {
          workspaceId,
          action: 'chat.installed',
          actor,
          target,
          payload: { platform: 'slack', teamId: access.teamId, teamName: access.teamName, scopes: access.scope, reinstall: !inst.created },
          now
        })
        // The Slack team moved to another workspace: the old one loses it, and its trail says so.
        if (previous !== null && previous.active && previous.workspaceId !== workspaceId) {
          await insertAuditEvent(tx, {
            workspaceId: previous.workspaceId,
            action: 'chat.uninstalled',
            actor,
            target,
            payload: { platform: 'slack', teamId: access.teamId, reason: 'installed_in_another_workspace' },
            now
          })
        }
        return inst
      })
      log.info({ teamId: row.teamId, workspaceId, reinstall: !row.created }, 'slack: app installed')
      return { installationId: row.id, teamId: row.teamId }
    },

    async receive (envelope, meta) {
      requireConfigured()
      const eventId = str(envelope.event_id)
      const event = envelope.event
      if (eventId === null || typeof event !== 'object' || event === null) {
        throw serviceError('VALIDATION_FAILED', ['an event_callback needs event_id and event'], {
          errors: [{ in: 'body', field: eventId === null ? 'event_id' : 'event', message: 'is required for event_callback' }]
        })
      }
      // The legacy verification token is a shared secret: it is not kept.
      const { token: _legacyToken, ...payload } = envelope
      const recorded = await insertChatEvent(db, {
        eventId,
        teamId: str(envelope.team_id),
        type: str(event.type) ?? 'unknown',
        payload,
        now: clock.now()
      })
      if (recorded) {
        enqueue(eventId)
      } else {
        log.debug({ eventId, retryNum: meta.retryNum }, 'slack: duplicate event acknowledged, not processed again')
      }
      return { recorded }
    },

    async whenIdle () {
      // A sweep may enqueue work and work may finish before the next sweep: wait until both rest.
      for (let busy = sweeping ?? running; busy !== null; busy = sweeping ?? running) await busy
    },

    async close () {
      closed = true
      clearInterval(timer)
      // In-flight work finishes; events not yet started stay 'received' for the next start.
      await sweeping
      await running
    }
  }
}
