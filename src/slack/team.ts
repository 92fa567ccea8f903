import { openWith } from '../lib/crypto.js'
import { findChatInstallation, type ChatInstallationRow } from '../db/chat-installations.js'
import { botTokenContext } from './install.js'
import type { SlackBotDeps } from './deps.js'

/** A Slack team's active installation and its bot token, decrypted; null when not installed. */
export async function teamContext (
  deps: Pick<SlackBotDeps, 'db' | 'requireKey'>,
  teamId: string
): Promise<{ inst: ChatInstallationRow, token: string } | null> {
  const key = deps.requireKey()
  const inst = await findChatInstallation(deps.db, 'slack', teamId)
  if (inst === null || !inst.active) return null
  return { inst, token: openWith(key, inst.botTokenEnc, botTokenContext(teamId)) }
}
