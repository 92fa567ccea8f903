import type { Principal } from '../principal.js'
import { serviceError } from '../errors.js'
import { openWith } from '../lib/crypto.js'
import { auditPrincipalAction } from '../audit/actor.js'
import { deleteChatInstallation, findActiveInstallationOfWorkspace } from '../db/chat-installations.js'
import { botTokenContext, type SlackInstallDeps } from './install.js'
import { SlackApiError } from './web-api.js'

// Uninstalling the Slack app from the service (an admin, the console's Settings): the bot token is
// revoked at Slack first (auth.revoke), then the installation is deleted with its encrypted token
// and `chat.uninstalled` recorded in the same transaction. A token Slack no longer knows (the app
// was removed in Slack meanwhile) is as good as revoked; Slack not answering leaves the
// installation as it was, to try again.

/** Slack's answers meaning the token is already dead. */
const ALREADY_DEAD = new Set(['invalid_auth', 'token_revoked', 'token_expired', 'account_inactive', 'not_authed'])

export async function uninstallSlack (deps: SlackInstallDeps, actor: Principal): Promise<void> {
  const { db, clock, log, api } = deps
  const { key } = deps.requireConfigured()
  const inst = await findActiveInstallationOfWorkspace(db, 'slack', actor.workspaceId)
  if (inst === null) throw serviceError('NOT_FOUND', ['Slack installation'])
  try {
    await api.authRevoke(openWith(key, inst.botTokenEnc, botTokenContext(inst.teamId)))
  } catch (err) {
    if (!(err instanceof SlackApiError)) throw err
    if (!ALREADY_DEAD.has(err.slackError)) {
      log.warn({ slackError: err.slackError, teamId: inst.teamId }, 'slack: auth.revoke failed; installation kept')
      throw serviceError('UPSTREAM_FAILED', ['Slack API'])
    }
  }
  const deleted = await db.transaction(async tx => {
    const row = await deleteChatInstallation(tx, inst.id)
    if (row === null) return false
    await auditPrincipalAction(deps.events, tx, actor, {
      action: 'chat.uninstalled',
      target: { type: 'chat_installation', id: row.id },
      payload: { platform: 'slack', teamId: row.teamId, teamName: row.teamName, reason: 'uninstalled_by_admin' },
      now: clock.now()
    })
    return true
  })
  // Another admin's uninstall got there first.
  if (!deleted) throw serviceError('NOT_FOUND', ['Slack installation'])
  log.info({ teamId: inst.teamId, workspaceId: actor.workspaceId }, 'slack: app uninstalled by an admin')
}
