import type { Principal } from '../principal.js'
import type { InviteResult } from '../invitations/delivery.js'
import type { Role } from '../db/users.js'
import type { InvitePolicy } from '../db/workspaces.js'
import type { InviteRequestRow } from '../db/invite-requests.js'
import { invitePolicyOf } from '../workspaces/invite-policy.js'
import { inviteRequestView, type InviteRequestDeps, type InviteRequestView } from './context.js'
import { requestInvite } from './request.js'
import { findInviteRequestView, listInviteRequestPage, type InviteRequestListQuery } from './view.js'
import { approveInviteRequest } from './approve.js'
import { denyInviteRequest } from './deny.js'
import {
  getNoticeSettings, putNoticeSettings, queueDueDigests, sendAdminNotice, type NoticeSettings
} from './admin-notices.js'

// Invite requests: under the `request` policy a member asks for someone to be invited, and an
// admin of the workspace approves (the invitation is then sent in the admin's name) or denies.
// Every door (REST, MCP, Slack buttons) comes through here; the decision is one guarded UPDATE,
// so two admins deciding at once make one decision and at most one invitation. One file per
// operation (request.ts, view.ts, approve.ts, deny.ts) over what they share (context.ts).

export interface InviteRequestService {
  policyOf(workspaceId: string): Promise<InvitePolicy>
  /** A member asks; the pending request this e-mail already has is returned as it is. */
  request(actor: Principal, input: { email: string, role: Role }): Promise<{ row: InviteRequestRow, created: boolean }>
  list(actor: Principal, q: InviteRequestListQuery): Promise<{ items: InviteRequestView[], nextCursor: string | null }>
  /** One request of the actor's workspace, or null. */
  find(actor: Principal, requestId: string): Promise<InviteRequestView | null>
  approve(actor: Principal, requestId: string, input: { role?: Role }): Promise<{
    request: InviteRequestView,
    invitation: InviteResult
  }>
  deny(actor: Principal, requestId: string, input: { reason?: string }): Promise<InviteRequestView>
  toView(row: InviteRequestRow): InviteRequestView
  /** How the signed-in admin hears of new requests (e-mail, Slack, not at all). */
  noticeSettings(actor: Principal): Promise<NoticeSettings>
  setNoticeSettings(actor: Principal, input: NoticeSettings): Promise<NoticeSettings>
  /** The scheduled sweep: queue each digest that is due. */
  queueDueDigests(): Promise<number>
  /** The job: one admin's notice or digest. */
  sendNotice(data: unknown): Promise<void>
}

export function createInviteRequestService (deps: InviteRequestDeps): InviteRequestService {
  return {
    policyOf: async workspaceId => await invitePolicyOf(deps.db, workspaceId),
    toView: row => inviteRequestView(deps, row),
    request: async (actor, input) => await requestInvite(deps, actor, input),
    list: async (actor, q) => await listInviteRequestPage(deps, actor, q),
    find: async (actor, requestId) => await findInviteRequestView(deps, actor, requestId),
    approve: async (actor, requestId, input) => await approveInviteRequest(deps, actor, requestId, input),
    deny: async (actor, requestId, input) => await denyInviteRequest(deps, actor, requestId, input),
    noticeSettings: async actor => await getNoticeSettings(deps, actor),
    setNoticeSettings: async (actor, input) => await putNoticeSettings(deps, actor, input),
    queueDueDigests: async () => await queueDueDigests(deps),
    sendNotice: async data => { await sendAdminNotice(deps, data) }
  }
}
