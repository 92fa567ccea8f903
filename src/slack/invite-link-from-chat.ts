import type { Principal } from '../principal.js'
import { isServiceError } from '../errors.js'
import { escapeSlackText } from './commands.js'
import type { Outcome } from './event-queue.js'
import type { SlackBotDeps } from './deps.js'
import { NOT_ALLOWED } from './invite-from-chat.js'

// `/invite link`: a fresh invite link (member role, 7 days, unlimited uses), answered to the
// person alone through the command's response_url (ephemeral); this app never posts it to a
// channel. Who may: an admin; a member under the `members` policy; under `request`, a member gets
// a link whose joins the admins approve; under `admins`, nobody else.

/** Whether `/invite` text asks for a link (`/invite link`). */
export function isLinkCommand (text: string): boolean {
  return text.trim().toLowerCase() === 'link'
}

export async function inviteLinkFromChat (
  deps: Pick<SlackBotDeps, 'log' | 'inviteRequests' | 'inviteLinks'>,
  person: Principal | null
): Promise<{ text: string, outcome: Outcome }> {
  if (person === null) {
    return { text: NOT_ALLOWED, outcome: { status: 'processed', error: 'refused: not a user of the workspace' } }
  }
  try {
    const policy = person.role === 'admin' ? 'members' : await deps.inviteRequests.policyOf(person.workspaceId)
    if (policy === 'admins') {
      return { text: NOT_ALLOWED, outcome: { status: 'processed', error: 'refused: not allowed by the invite policy' } }
    }
    const requiresApproval = policy === 'request'
    const link = await deps.inviteLinks.create(person, { requiresApproval })
    const expires = link.expiresAt.slice(0, 10)
    const approval = requiresApproval ? ' Each person who joins through it waits for an admin\'s approval.' : ''
    return {
      text: `Here is a new invite link, only for you to see: ${link.url}\n` +
        `It lets anyone who has it join as a member after confirming their e-mail address, until ${expires}.` +
        `${approval} Share it where you choose; an admin can revoke it in the console.`,
      outcome: { status: 'processed' }
    }
  } catch (err) {
    if (!isServiceError(err)) {
      deps.log.error({ err }, 'slack: invite link from chat failed')
      return {
        text: 'Could not make an invite link: something went wrong on our side. Try again later.',
        outcome: { status: 'failed', error: 'internal error while making an invite link' }
      }
    }
    return {
      text: `Could not make an invite link: ${escapeSlackText(err.message)}`,
      outcome: { status: 'processed', error: err.code }
    }
  }
}
