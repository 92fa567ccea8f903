import type { Database } from '../db/client.js'
import type { Logger } from '../logger.js'
import type { Principal } from '../principal.js'
import { findUserByEmail } from '../db/users.js'
import { storedAddress } from '../lib/email.js'
import type { ChatInstallationRow } from '../db/chat-installations.js'
import { SlackApiError, type SlackWebApi } from './web-api.js'

// Who a Slack user is to us: their Slack profile's e-mail (users.info), matched to an active user
// of the workspace that installed the app. Slack's own roles grant nothing here; what a person
// may do is decided by their role in our database, read afresh for every command and click.

/** The speaker's e-mail; null when Slack will not tell (hidden, or no such user): a refusal. */
async function slackUserEmail (
  deps: { api: SlackWebApi, log: Logger },
  token: string,
  slackUser: string
): Promise<string | null> {
  try {
    return await deps.api.userEmail(token, slackUser)
  } catch (err) {
    if (!(err instanceof SlackApiError)) throw err
    deps.log.warn({ slackError: err.slackError }, 'slack: users.info failed; treating the speaker as unknown')
    return null
  }
}

/** The active user of the installation's workspace behind a Slack user, as a chat principal. */
export async function personBehind (
  deps: { db: Database, api: SlackWebApi, log: Logger },
  inst: ChatInstallationRow,
  token: string,
  slackUser: string,
  /** What asked (a chat message's timestamp), named by the audit row and the event. */
  requestId: string | null = null
): Promise<Principal | null> {
  const given = await slackUserEmail(deps, token, slackUser)
  const email = given === null ? null : storedAddress(given)
  if (email === null) return null
  const user = await findUserByEmail(deps.db, email)
  if (user === null || user.status !== 'active' || user.workspaceId !== inst.workspaceId) return null
  return {
    kind: 'chat',
    userId: user.id,
    workspaceId: user.workspaceId,
    email: user.email,
    name: user.name,
    role: user.role,
    sessionId: null,
    requestId,
    apiKeyId: null
  }
}
