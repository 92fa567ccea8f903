import type { Clock } from '../clock.js'
import type { Database } from '../db/client.js'
import type { Logger } from '../logger.js'
import type { Principal } from '../principal.js'
import { isServiceError } from '../errors.js'
import { decryptSecret } from '../lib/crypto.js'
import { findUserByEmail } from '../db/users.js'
import type { EventOutbox } from '../events/outbox.js'
import { deactivateChatInstallation, findChatInstallation, type ChatInstallationRow } from '../db/chat-installations.js'
import { SlackApiError, type SlackWebApi } from './web-api.js'
import { escapeSlackText, HELP_TEXT, parseCommand } from './commands.js'
import { botTokenContext } from './install.js'
import { str, type Outcome, type SlackEnvelope } from './event-queue.js'

// The bot: what an event from Slack does. A mention or a direct message is a command (help, or
// invite someone, for an admin of the installing workspace, through the invitations service);
// an uninstall or a revoked bot token deactivates the installation.

/** What the bot needs from the invitations service (src/invitations/service.ts). */
export interface InvitationsPort {
  invite(actor: Principal, input: {
    email: string,
    role: 'admin' | 'member'
  }): Promise<{ success: boolean, message: string, invitationId?: string, invitationUrl?: string }>
}

export interface SlackBotDeps {
  db: Database
  clock: Clock
  log: Logger
  api: SlackWebApi
  invitations: InvitationsPort
  events: EventOutbox
  /** The key bot tokens are encrypted with; throws CHAT_PLATFORM_NOT_CONFIGURED without one. */
  requireKey(): Buffer
}

type Json = Record<string, unknown>
type Reply = (text: string) => Promise<void>

export async function handleSlackEvent (deps: SlackBotDeps, envelope: SlackEnvelope): Promise<Outcome> {
  const event = (envelope.event ?? {}) as Json
  const teamId = str(envelope.team_id)
  if (teamId === null) return { status: 'ignored', error: 'no team_id' }
  const db = deps.db
  switch (event.type) {
    case 'app_uninstalled':
      return await uninstall(deps, teamId, 'app_uninstalled')
    case 'tokens_revoked': {
      const bots = ((event.tokens as Json | undefined)?.bot ?? []) as unknown[]
      const inst = await findChatInstallation(db, 'slack', teamId)
      if (inst === null || bots.length === 0) return { status: 'ignored' }
      // Only our bot's token matters; user tokens are not used by this app.
      if (inst.botUserId !== null && !bots.includes(inst.botUserId)) return { status: 'ignored' }
      return await uninstall(deps, teamId, 'tokens_revoked')
    }
    case 'app_mention':
      return await command(deps, teamId, event)
    case 'message':
      // Direct messages from people only: not edits, joins or the bot's own replies.
      if (event.channel_type !== 'im' || event.bot_id !== undefined || event.subtype !== undefined) {
        return { status: 'ignored' }
      }
      return await command(deps, teamId, event)
    default:
      return { status: 'ignored' }
  }
}

async function uninstall (deps: SlackBotDeps, teamId: string, reason: string): Promise<Outcome> {
  const { db, clock, log } = deps
  const done = await db.transaction(async tx => {
    const now = clock.now()
    const inst = await deactivateChatInstallation(tx, 'slack', teamId, now)
    if (inst === null) return false
    await deps.events.record(tx, {
      workspaceId: inst.workspaceId,
      action: 'chat.uninstalled',
      actor: { type: 'chat_platform', id: teamId, label: 'Slack', source: 'chat', requestId: null },
      target: { type: 'chat_installation', id: inst.id },
      payload: { platform: 'slack', teamId, reason },
      now
    })
    return true
  })
  log.info({ teamId, reason, deactivated: done }, 'slack: installation deactivated')
  return done ? { status: 'processed' } : { status: 'ignored', error: 'no active installation' }
}

async function command (deps: SlackBotDeps, teamId: string, event: Json): Promise<Outcome> {
  const { db, api } = deps
  const key = deps.requireKey()
  const inst = await findChatInstallation(db, 'slack', teamId)
  if (inst === null || !inst.active) return { status: 'ignored', error: 'no active installation' }
  const slackUser = str(event.user)
  const channel = str(event.channel)
  if (slackUser === null || channel === null || slackUser === inst.botUserId) return { status: 'ignored' }
  const token = decryptSecret(key, inst.botTokenEnc, botTokenContext(teamId))
  // Reply in the thread of the message (its parent when the message is itself a reply).
  const threadTs = str(event.thread_ts) ?? str(event.ts)
  const reply: Reply = async (text) => {
    await api.postMessage(token, { channel, text, ...(threadTs !== null ? { threadTs } : {}) })
  }

  const cmd = parseCommand(str(event.text) ?? '')
  if (cmd.kind === 'help') {
    await reply(HELP_TEXT)
    return { status: 'processed' }
  }
  const actor = await adminBehind(deps.db, inst, await speakerEmail(deps, token, slackUser), str(event.ts))
  if (actor === null) {
    await reply('Sorry, only admins of this workspace can invite people. Ask one of your admins.')
    return { status: 'processed', error: 'refused: not an admin of the workspace' }
  }
  return await invite(deps, actor, cmd, { teamId, reply })
}

async function invite (
  deps: SlackBotDeps,
  actor: Principal,
  cmd: { email: string, role: 'admin' | 'member' },
  to: { teamId: string, reply: Reply }
): Promise<Outcome> {
  const { log } = deps
  const who = escapeSlackText(cmd.email)
  try {
    const result = await deps.invitations.invite(actor, { email: cmd.email, role: cmd.role })
    // Never the signup link: it is a credential, and a channel has many readers.
    await to.reply(`Invited ${who} as ${cmd.role}. ${escapeSlackText(result.message)}`)
    return { status: 'processed' }
  } catch (err) {
    if (!isServiceError(err)) {
      log.error({ err, teamId: to.teamId }, 'slack: invite from chat failed')
      await to.reply(`Could not invite ${who}: something went wrong on our side. Try again later.`)
      return { status: 'failed', error: 'internal error while inviting' }
    }
    // Registry messages are written for clients (5xx ones carry no internals).
    await to.reply(`Could not invite ${who}: ${escapeSlackText(err.message)}`)
    return { status: 'processed', error: err.code }
  }
}

/** The speaker's e-mail; null when Slack will not tell (hidden, or no such user): a refusal. */
async function speakerEmail (deps: SlackBotDeps, token: string, slackUser: string): Promise<string | null> {
  const { api, log } = deps
  try {
    return await api.userEmail(token, slackUser)
  } catch (err) {
    if (!(err instanceof SlackApiError)) throw err
    log.warn({ slackError: err.slackError }, 'slack: users.info failed; treating the speaker as unknown')
    return null
  }
}

/** The active admin of the installation's workspace with this e-mail, as a chat principal. */
async function adminBehind (
  db: Database, inst: ChatInstallationRow, email: string | null, messageTs: string | null
): Promise<Principal | null> {
  if (email === null) return null
  const user = await findUserByEmail(db, email)
  if (user === null) return null
  if (user.status !== 'active' || user.role !== 'admin' || user.workspaceId !== inst.workspaceId) return null
  return {
    kind: 'chat',
    userId: user.id,
    workspaceId: user.workspaceId,
    email: user.email,
    name: user.name,
    role: 'admin',
    sessionId: null,
    apiKeyId: null,
    // The chat message that asked (its Slack timestamp identifies it within the channel).
    requestId: messageTs
  }
}
