import type { ChatInstallationRow } from '../db/chat-installations.js'
import type { SlackBotDeps } from './deps.js'
import { adminHome, memberHome } from './blocks.js'
import { personBehind } from './people.js'

// The App Home tab (views.publish): an admin sees pending invitations and open requests with
// their buttons; a member sees their own requests. Published when the tab is opened and again
// after each action taken from Slack, so it never shows a decision as still open.

const SHOWN = 20

export async function publishHome (
  deps: SlackBotDeps,
  team: { inst: ChatInstallationRow, token: string },
  slackUser: string
): Promise<void> {
  const person = await personBehind(deps, team.inst, team.token, slackUser)
  let view
  if (person === null) {
    view = memberHome([], false)
  } else if (person.role === 'admin') {
    const [invitations, requests] = await Promise.all([
      deps.invitations.list(person, { status: 'pending', limit: SHOWN }),
      deps.inviteRequests.list(person, { status: 'pending', limit: SHOWN })
    ])
    view = adminHome(invitations.items, requests.items)
  } else {
    const [requests, policy] = await Promise.all([
      deps.inviteRequests.list(person, { mine: true, limit: SHOWN }),
      deps.inviteRequests.policyOf(person.workspaceId)
    ])
    view = memberHome(requests.items, policy !== 'admins')
  }
  await deps.api.publishView(team.token, slackUser, view)
}
