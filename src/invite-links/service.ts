import type { Principal } from '../principal.js'
import type { InviteLinkCreated, InviteLinkDeps, InviteLinkView } from './context.js'
import {
  createInviteLink, listInviteLinkPage, regenerateLink, revokeLink, type CreateInviteLinkInput
} from './manage.js'
import { joinPageState, requestJoin, type JoinPageState } from './join.js'
import { confirmJoin, previewConfirmation, type JoinConfirmationPreview, type JoinOutcome } from './confirm.js'

// Invite links: an admin makes a link anyone who has it may use to join as a member, after
// proving their address by e-mail. Every door (REST, MCP, Slack's `/invite link`) comes through
// here. One file per operation group (manage.ts, join.ts, confirm.ts) over context.ts.

export interface InviteLinkService {
  create(actor: Principal, input: CreateInviteLinkInput): Promise<InviteLinkCreated>
  list(
    actor: Principal, q: { limit: number, cursor?: string }
  ): Promise<{ items: InviteLinkView[], nextCursor: string | null }>
  revoke(actor: Principal, linkId: string): Promise<InviteLinkView>
  regenerate(actor: Principal, linkId: string): Promise<InviteLinkCreated>
  /** What the link's page shows (a read: opening the link changes nothing). */
  pageState(code: string): Promise<JoinPageState>
  /**
   * E-mails a confirmation link to the address (within the link's hourly budget), bound to the
   * asking browser's secret (`browser`).
   */
  requestJoin(code: string, input: { email: string, name?: string | undefined, browser: string | null }): Promise<void>
  /** What confirming would do, and whether `browser` asked for it; uses nothing. */
  previewConfirmation(code: string, token: string, browser: string | null): Promise<JoinConfirmationPreview>
  /** The proven address joins (session token returned) or becomes an invite request. */
  confirm(code: string, token: string): Promise<JoinOutcome>
}

export function createInviteLinkService (deps: InviteLinkDeps): InviteLinkService {
  return {
    create: async (actor, input) => await createInviteLink(deps, actor, input),
    list: async (actor, q) => await listInviteLinkPage(deps, actor, q),
    revoke: async (actor, linkId) => await revokeLink(deps, actor, linkId),
    regenerate: async (actor, linkId) => await regenerateLink(deps, actor, linkId),
    pageState: async code => await joinPageState(deps, code),
    requestJoin: async (code, input) => { await requestJoin(deps, code, input) },
    previewConfirmation: async (code, token, browser) => await previewConfirmation(deps, code, token, browser),
    confirm: async (code, token) => await confirmJoin(deps, code, token)
  }
}
