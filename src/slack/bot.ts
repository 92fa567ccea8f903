import { deactivateChatInstallation, findChatInstallation } from '../db/chat-installations.js'
import { HELP_TEXT, parseCommand } from './commands.js'
import { str, type Outcome, type SlackEnvelope } from './event-queue.js'
import type { SlackBotDeps } from './deps.js'
import { personBehind } from './people.js'
import { teamContext } from './team.js'
import { inviteOrRequest } from './invite-from-chat.js'
import { publishHome } from './home.js'
import { handleCommand, handleInteraction } from './interactions.js'
import { handleNotice } from './notices.js'

// The bot: what an event from Slack does. A mention or a direct message is a command (help, or
// invite someone, decided by invite-from-chat.ts); opening the App Home publishes it; an
// uninstall or a revoked bot token deactivates the installation.

type Json = Record<string, unknown>
type Reply = (text: string) => Promise<void>

export async function handleSlackEvent (deps: SlackBotDeps, envelope: SlackEnvelope): Promise<Outcome> {
  const event = (envelope.event ?? {}) as Json
  // Notices of changes made through any door (service.ts) belong to a workspace, not a team.
  if (envelope.type === 'notice') return await handleNotice(deps, event)
  const teamId = str(envelope.team_id)
  if (teamId === null) return { status: 'ignored', error: 'no team_id' }
  // Commands and interactions share the durable intake with events (service.ts records them).
  if (envelope.type === 'slash_command') return await handleCommand(deps, teamId, event)
  if (envelope.type === 'interaction') return await handleInteraction(deps, teamId, event)
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
    case 'app_home_opened': {
      const user = str(event.user)
      if (event.tab !== 'home' || user === null) return { status: 'ignored' }
      const team = await teamContext(deps, teamId)
      if (team === null) return { status: 'ignored', error: 'no active installation' }
      await publishHome(deps, team, user)
      return { status: 'processed' }
    }
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
  const { api } = deps
  const team = await teamContext(deps, teamId)
  if (team === null) return { status: 'ignored', error: 'no active installation' }
  const slackUser = str(event.user)
  const channel = str(event.channel)
  if (slackUser === null || channel === null || slackUser === team.inst.botUserId) return { status: 'ignored' }
  // Reply in the thread of the message (its parent when the message is itself a reply).
  const threadTs = str(event.thread_ts) ?? str(event.ts)
  const reply: Reply = async (text) => {
    await api.postMessage(team.token, { channel, text, ...(threadTs !== null ? { threadTs } : {}) })
  }

  const cmd = parseCommand(str(event.text) ?? '')
  if (cmd.kind === 'help') {
    await reply(HELP_TEXT)
    return { status: 'processed' }
  }
  const person = await personBehind(deps, team.inst, team.token, slackUser, str(event.ts))
  const { text, outcome } = await inviteOrRequest(deps, person, cmd)
  await reply(text)
  return outcome
}
