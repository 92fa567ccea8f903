import type { Ports } from '../ports/index.js'
import { serviceError } from '../errors.js'
import type { Keyring } from '../lib/crypto.js'
import { encryptionKeyring } from '../lib/secret-keys.js'
import { checkSlackSignature } from './signature.js'
import { createSlackWebApi, SlackApiError, type SlackWebApi } from './web-api.js'
import { createSlackInstall, type SlackConfig, type SlackInstall } from './install.js'
import { createEventQueue, type EventQueue } from './event-queue.js'
import { handleSlackEvent } from './bot.js'
import type { InvitationsPort, InviteLinksPort, InviteRequestsPort } from './deps.js'
import type { InviteRequestNotice } from '../invite-requests/context.js'
import type { InviterNotice } from '../ports/inviter-notices.js'
import { acknowledgeCommand, acknowledgeInteraction, type CommandAck, type InteractionAck } from './intake.js'
import { createNoticeIntake } from './notice-intake.js'
import { uninstallSlack } from './uninstall.js'
import { tellAdminDigest } from './notices.js'
import type { InviteRequestRow } from '../db/invite-requests.js'
import type { Principal } from '../principal.js'

// The Slack app, composed: OAuth v2 install (install.ts), signed requests (signature.ts),
// durable intake with its sweep (event-queue.ts) for events, slash commands and interactions
// (intake.ts) and notices (notice-intake.ts), the bot (bot.ts), commands and clicks
// (interactions.ts), the App Home (home.ts) and telling people about invite requests
// (notices.ts). Without a Slack config or an encryption key every operation answers
// CHAT_PLATFORM_NOT_CONFIGURED.

export { botTokenContext } from './install.js'

export interface SlackService extends SlackInstall, EventQueue {
  readonly configured: boolean
  /** An admin uninstalls: the bot token revoked at Slack, the installation deleted (uninstall.ts). */
  uninstall(actor: Principal): Promise<void>
  /** A slash command: checked and recorded now, done after the acknowledgement. */
  command(form: Record<string, unknown>): Promise<CommandAck>
  /** An interaction's `payload` (JSON text): a modal's invalid input answered now, the rest queued. */
  interaction(payload: string): Promise<InteractionAck>
  /** Tell Slack about an invite request's change (after it is committed); never throws. */
  noticeRequest(notice: InviteRequestNotice): void
  /** Tell an inviter about their invitation (accepted, delivery failed) in a DM; never throws. */
  noticeInviter(notice: InviterNotice): void
  /** The hourly digest of waiting invite requests to one admin in a DM; nothing when not installed. */
  tellAdminDigest(notice: { workspaceId: string, adminEmail: string, requests: InviteRequestRow[] }): Promise<void>
  /** The slackSignature security scheme: throws CHAT_PLATFORM_NOT_CONFIGURED or SIGNATURE_INVALID. */
  verifySignature(request: { headers: Record<string, string | string[] | undefined>, rawBody: Buffer | null }): void
}

export type SlackDeps = Pick<Ports, 'config' | 'db' | 'clock' | 'log' | 'events'> & {
  invitations: InvitationsPort
  inviteRequests: InviteRequestsPort
  inviteLinks: InviteLinksPort
  api?: SlackWebApi
}

export function createSlackService (deps: SlackDeps): SlackService {
  const { config, db, clock, log } = deps
  const slack = config.slack
  const key = encryptionKeyring(config)
  const api = deps.api ?? createSlackWebApi({ apiUrl: slack?.apiUrl ?? 'https://slack.com/api', log })
  const configured = slack !== null && key !== null

  function requireConfigured (): { slack: SlackConfig, key: Keyring } {
    if (slack === null || key === null) throw serviceError('CHAT_PLATFORM_NOT_CONFIGURED')
    return { slack, key }
  }

  const installDeps = { db, clock, log, api, events: deps.events, requireConfigured }
  const install = createSlackInstall(installDeps)
  const bot = {
    db,
    clock,
    log,
    api,
    invitations: deps.invitations,
    inviteRequests: deps.inviteRequests,
    inviteLinks: deps.inviteLinks,
    events: deps.events,
    requireKey: () => requireConfigured().key
  }
  const queue = createEventQueue({
    db,
    clock,
    log,
    process: async envelope => await handleSlackEvent(bot, envelope),
    describeError: err => err instanceof SlackApiError ? err.message : null,
    sweep: configured
  })
  const notices = createNoticeIntake({ queue, log, configured })

  return {
    configured,
    startInstall: install.startInstall,
    completeInstall: install.completeInstall,
    uninstall: async actor => { await uninstallSlack(installDeps, actor) },

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

    async receive (envelope, meta) {
      requireConfigured()
      return await queue.receive(envelope, meta)
    },
    async command (form) {
      requireConfigured()
      return await acknowledgeCommand({ queue, log }, form)
    },
    async interaction (text) {
      requireConfigured()
      return await acknowledgeInteraction({ queue, log }, text)
    },
    noticeRequest: notice => { notices.request(notice) },
    noticeInviter: notice => { notices.inviter(notice) },
    tellAdminDigest: async notice => {
      if (configured) await tellAdminDigest(bot, notice)
    },
    whenIdle: async () => { await notices.settle() },
    close: async () => {
      await queue.close()
      await notices.drain()
    }
  }
}
