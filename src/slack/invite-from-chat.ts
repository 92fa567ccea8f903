import type { Principal } from '../principal.js'
import type { Role } from '../db/users.js'
import { isServiceError } from '../errors.js'
import { memberInviteDoor } from '../workspaces/invite-policy.js'
import { escapeSlackText } from './commands.js'
import type { Outcome } from './event-queue.js'
import type { SlackBotDeps } from './deps.js'

// One decision for every way of inviting from Slack (`@bot invite`, `/invite`, the Invite people
// modal): an admin invites; a member invites members under the `members` policy, or asks the
// admins under `request`; otherwise the answer is a refusal. The person is who our database says
// the Slack user is (people.ts), with their role as it is now.

export const NOT_ALLOWED = 'Sorry, only admins of this workspace can invite people. Ask one of your admins.'

/** What to tell the person, and how the work ended (for the event's row). */
export async function inviteOrRequest (
  deps: Pick<SlackBotDeps, 'log' | 'invitations' | 'inviteRequests'>,
  person: Principal | null,
  cmd: { email: string, role: Role }
): Promise<{ text: string, outcome: Outcome }> {
  const who = escapeSlackText(cmd.email)
  if (person === null) {
    return { text: NOT_ALLOWED, outcome: { status: 'processed', error: 'refused: not a user of the workspace' } }
  }
  try {
    if (person.role === 'admin') return await invite(deps, person, cmd)
    const policy = await deps.inviteRequests.policyOf(person.workspaceId)
    const door = memberInviteDoor(policy, cmd.role)
    if (door === 'invite') return await invite(deps, person, cmd)
    if (door === 'request') {
      const { created } = await deps.inviteRequests.request(person, cmd)
      return {
        text: created
          ? `Asked the workspace's admins to invite ${who} as ${cmd.role}. I will tell you what they decide.`
          : `${who} has already been asked for; the admins will decide.`,
        outcome: { status: 'processed' }
      }
    }
    const text = policy === 'members' ? 'Sorry, only admins can invite admins.' : NOT_ALLOWED
    return { text, outcome: { status: 'processed', error: 'refused: not allowed by the invite policy' } }
  } catch (err) {
    if (!isServiceError(err)) {
      deps.log.error({ err }, 'slack: invite from chat failed')
      return {
        text: `Could not invite ${who}: something went wrong on our side. Try again later.`,
        outcome: { status: 'failed', error: 'internal error while inviting' }
      }
    }
    // Registry messages are written for clients (5xx ones carry no internals).
    return {
      text: `Could not invite ${who}: ${escapeSlackText(err.message)}`,
      outcome: { status: 'processed', error: err.code }
    }
  }
}

async function invite (
  deps: Pick<SlackBotDeps, 'invitations'>,
  actor: Principal,
  cmd: { email: string, role: Role }
): Promise<{ text: string, outcome: Outcome }> {
  const result = await deps.invitations.invite(actor, cmd)
  // Never the signup link: it is a credential, and a channel has many readers.
  return {
    text: `Invited ${escapeSlackText(cmd.email)} as ${cmd.role}. ${escapeSlackText(result.message)}`,
    outcome: { status: 'processed' }
  }
}
