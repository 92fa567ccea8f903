import { openWith } from '../lib/crypto.js'
import { findActiveInstallationOfWorkspace } from '../db/chat-installations.js'
import { findUserInWorkspace, listActiveAdmins } from '../db/users.js'
import { listToldInSlackAtOnce } from '../db/admin-notices.js'
import { addInviteRequestMessage, findInviteRequest, type InviteRequestRow } from '../db/invite-requests.js'
import { str, type Outcome } from './event-queue.js'
import type { InviteRequestNotice } from '../invite-requests/context.js'
import type { InviterNotice } from '../ports/inviter-notices.js'
import { botTokenContext } from './install.js'
import { decidedMessage, requestMessage } from './blocks.js'
import { escapeSlackText } from './commands.js'
import type { SlackBotDeps } from './deps.js'

// Telling people in Slack what happened, whichever door it happened through (Slack buttons, REST,
// MCP): each admin gets a DM with the buttons when a request is made; once decided, those
// messages are updated to say who decided, and the requester gets a DM; an inviter hears that
// their invitation was accepted or could not be delivered. Each notice is a row of the durable
// queue (service.ts records it after the change is committed) and is read back from the database
// here. People are found in Slack by their e-mail (users.lookupByEmail).

type Deps = Pick<SlackBotDeps, 'db' | 'log' | 'api' | 'requireKey'>

async function workspaceTeam (deps: Deps, workspaceId: string): Promise<{ token: string } | null> {
  const inst = await findActiveInstallationOfWorkspace(deps.db, 'slack', workspaceId)
  if (inst === null) return null
  return { token: openWith(deps.requireKey(), inst.botTokenEnc, botTokenContext(inst.teamId)) }
}

/** How a person is named in Slack: a mention when Slack knows their e-mail, else the e-mail. */
async function mentionOf (deps: Deps, token: string, person: { email: string }): Promise<string> {
  const id = await deps.api.userIdByEmail(token, person.email)
  return id !== null ? `<@${id}>` : escapeSlackText(person.email)
}

type Json = Record<string, unknown>
/** Who acted, as named in a message. */
interface Person { name: string | null, email: string }

/** A recorded notice: what happened is read back from the database, as it is now. */
export async function handleNotice (deps: Deps, event: Json): Promise<Outcome> {
  const workspaceId = str(event.workspaceId)
  if (workspaceId === null) return { status: 'ignored' }
  switch (event.type) {
    case 'invite_request.created':
    case 'invite_request.approved':
    case 'invite_request.denied': {
      const kind = (event.type as string).slice('invite_request.'.length) as InviteRequestNotice['kind']
      const request = await findInviteRequest(deps.db, workspaceId, str(event.requestId) ?? '')
      // Asking admins about a request decided meanwhile would show buttons that no longer work.
      if (request === null || (kind === 'created' && request.status !== 'pending')) return { status: 'ignored' }
      const actorId = kind === 'created' ? request.requestedBy : request.decidedBy
      // A request nobody made for someone else: the person asked for themselves (an invite link
      // that needs approval, a verified domain), and is named by the address they proved.
      const actor = actorId !== null
        ? await findUserInWorkspace(deps.db, workspaceId, actorId)
        : kind === 'created' ? { name: null, email: request.email } : null
      if (actor === null) return { status: 'ignored', error: 'the person is gone' }
      await tellAboutRequest(deps, { kind, request, actor })
      return { status: 'processed' }
    }
    case 'invitation.accepted':
    case 'invitation.delivery_failed':
    case 'invitation.bounced':
      await tellInviterInSlack(deps, {
        kind: (event.type as string).slice('invitation.'.length) as InviterNotice['kind'],
        workspaceId,
        invitationId: str(event.invitationId) ?? '',
        inviterId: str(event.inviterId),
        email: str(event.email) ?? '',
        reason: str(event.reason) ?? undefined
      })
      return { status: 'processed' }
    default:
      return { status: 'ignored' }
  }
}

async function tellAboutRequest (
  deps: Deps,
  notice: { kind: InviteRequestNotice['kind'], request: InviteRequestRow, actor: Person }
): Promise<void> {
  const { request, actor } = notice
  const team = await workspaceTeam(deps, request.workspaceId)
  if (team === null) return
  if (notice.kind === 'created') {
    await askAdmins(deps, team.token, request, actor)
    return
  }
  const decider = await mentionOf(deps, team.token, actor)
  const message = decidedMessage(request, decider)
  for (const m of request.chatMessages) {
    await deps.api.updateMessage(team.token, { channel: m.channel, ts: m.ts, ...message }).catch((err: Error) => {
      deps.log.warn({ err: err.message }, 'slack: updating an invite request message failed')
    })
  }
  const requester = request.requestedBy !== null
    ? await findUserInWorkspace(deps.db, request.workspaceId, request.requestedBy)
    : null
  if (requester === null) return
  const requesterId = await deps.api.userIdByEmail(team.token, requester.email)
  if (requesterId === null) return
  const reason = request.reason !== null ? ` Reason: ${escapeSlackText(request.reason)}` : ''
  const text = request.status === 'approved'
    ? `Your request to invite ${escapeSlackText(request.email)} was approved by ${decider}; ` +
      'the invitation is on its way.'
    : `Your request to invite ${escapeSlackText(request.email)} was denied by ${decider}.${reason}`
  await deps.api.postMessage(team.token, { channel: requesterId, text })
}

async function askAdmins (
  deps: Deps,
  token: string,
  request: InviteRequestRow,
  requester: Person
): Promise<void> {
  const message = requestMessage(request, request.requestedBy === null ? null : requester.name ?? requester.email)
  // Only those who hear of requests in Slack and whose hour was quiet: the others get e-mail,
  // nothing, or the digest (src/invite-requests/admin-notices.ts decided it with the request).
  const told = new Set(await listToldInSlackAtOnce(deps.db, request.id))
  for (const admin of await listActiveAdmins(deps.db, request.workspaceId)) {
    if (!told.has(admin.id)) continue
    const slackId = await deps.api.userIdByEmail(token, admin.email)
    if (slackId === null) continue
    const posted = await deps.api.postMessage(token, { channel: slackId, ...message })
    // Remembered so the message can say who decided once someone has.
    await addInviteRequestMessage(deps.db, request.id, posted)
  }
}

/** The hourly digest of invite requests that arrived after an admin's last notice: one DM. */
export async function tellAdminDigest (
  deps: Deps,
  notice: { workspaceId: string, adminEmail: string, requests: InviteRequestRow[] }
): Promise<void> {
  const team = await workspaceTeam(deps, notice.workspaceId)
  if (team === null) return
  const slackId = await deps.api.userIdByEmail(team.token, notice.adminEmail)
  if (slackId === null) return
  const n = notice.requests.length
  const lines = notice.requests.map(r =>
    `• ${escapeSlackText(r.email)} as ${r.role === 'admin' ? 'an admin' : 'a member'}`)
  const text = `${n === 1 ? 'An invite request waits' : `${n} invite requests wait`} ` +
    `for a decision:\n${lines.join('\n')}\nApprove or deny them in the App Home or the admin console.`
  await deps.api.postMessage(team.token, { channel: slackId, text })
}

/**
 * Another sender's words (a bounce's reason) as plain text in a Slack message: a code span, which
 * Slack shows as it is (no links, mentions or formatting), its own delimiter taken out.
 */
function verbatim (s: string): string {
  return '`' + escapeSlackText(s.replaceAll('`', "'")) + '`'
}

/** A DM to whoever sent an invitation: it was accepted, its e-mail could not be delivered, or it bounced. */
async function tellInviterInSlack (deps: Deps, notice: InviterNotice): Promise<void> {
  if (notice.inviterId === null) return
  const team = await workspaceTeam(deps, notice.workspaceId)
  if (team === null) return
  const inviter = await findUserInWorkspace(deps.db, notice.workspaceId, notice.inviterId)
  if (inviter === null || inviter.status !== 'active') return
  const slackId = await deps.api.userIdByEmail(team.token, inviter.email)
  if (slackId === null) return
  const who = escapeSlackText(notice.email)
  const text = notice.kind === 'accepted'
    ? `${who} accepted your invitation and has joined the workspace.`
    : notice.kind === 'bounced'
      ? `Your invitation to ${who} bounced: ${verbatim(notice.reason ?? 'the mail server refused it')}. ` +
        'Check the address, then invite the right one.'
      : `Your invitation to ${who} could not be delivered. Resend it from the App Home or with \`/invite ${who}\`.`
  await deps.api.postMessage(team.token, { channel: slackId, text })
}
