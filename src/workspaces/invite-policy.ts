import type { Queryable } from '../db/client.js'
import type { Role } from '../db/users.js'
import { findInvitePolicy, type InvitePolicy } from '../db/workspaces.js'
import { serviceError } from '../errors.js'
import { requireAdminScope, workspaceGone, type Principal } from '../principal.js'

// The invite policy, one rule for every door (REST, the console, Slack): what a member may do
// when they want someone in. Admins always invite, whatever the policy.
//   admins  — only admins invite; a member is refused.
//   request — a member asks (an invite request), an admin approves or denies.
//   members — a member invites members; only admins invite admins.

/** What a member may do to get `role` invited under `policy`. */
export function memberInviteDoor (policy: InvitePolicy, role: Role): 'invite' | 'request' | 'refused' {
  if (policy === 'members') return role === 'member' ? 'invite' : 'refused'
  return policy === 'request' ? 'request' : 'refused'
}

/** The workspace's policy; a workspace deleted after authentication is gone (401). */
export async function invitePolicyOf (db: Queryable, workspaceId: string): Promise<InvitePolicy> {
  const policy = await findInvitePolicy(db, workspaceId)
  if (policy === null) throw workspaceGone()
  return policy
}

/** Why `actor` may not `want` (invite directly, or file a request) for `role`, in words (403). */
function notAllowed (policy: InvitePolicy, actor: Principal, want: 'invite' | 'request', role: Role): Error {
  let why: string
  if (actor.role === 'admin') {
    why = 'admins invite people themselves (POST /api/users/invite); invite requests are for members'
  } else if (policy === 'admins') why = 'only admins invite people to this workspace; ask one of its admins'
  else if (role === 'admin') why = 'only admins invite admins'
  else if (want === 'invite') {
    why = 'members ask for invitations here: file an invite request (POST /api/invite-requests), ' +
      'an admin approves or denies it'
  } else why = 'members invite members themselves here (POST /api/users/invite); no request is needed'
  return serviceError('INVITE_NOT_ALLOWED', [policy, why], { invitePolicy: policy })
}

/**
 * A member's direct invitation, checked against the policy (admins pass without a read). An API
 * key inviting an admin needs `members:admin` besides its invitation scope.
 */
export async function requireMayInvite (db: Queryable, actor: Principal, role: Role): Promise<void> {
  if (role === 'admin') requireAdminScope(actor)
  if (actor.role === 'admin') return
  const policy = await invitePolicyOf(db, actor.workspaceId)
  if (memberInviteDoor(policy, role) !== 'invite') throw notAllowed(policy, actor, 'invite', role)
}

/** A request for an invitation: members only, under the `request` policy. */
export async function requireMayRequest (db: Queryable, actor: Principal, role: Role): Promise<void> {
  const policy = await invitePolicyOf(db, actor.workspaceId)
  if (actor.role === 'admin' || memberInviteDoor(policy, role) !== 'request') {
    throw notAllowed(policy, actor, 'request', role)
  }
}
