import type { Principal } from '../principal.js'
import type { Role } from '../db/users.js'
import { isServiceError } from '../errors.js'
import { storedAddress } from '../lib/email.js'
import { escapeSlackText, parseCommand } from './commands.js'
import { str, type Outcome } from './event-queue.js'
import type { SlackBotDeps } from './deps.js'
import { ACTION, CALLBACK, denyModal, inviteModal } from './blocks.js'
import { personBehind } from './people.js'
import { teamContext } from './team.js'
import { inviteOrRequest, NOT_ALLOWED } from './invite-from-chat.js'
import { publishHome } from './home.js'
import { inviteLinkFromChat, isLinkCommand } from './invite-link-from-chat.js'

// Slash commands and interactions (buttons, modal submissions, shortcuts), done after the
// acknowledgement. Every click is authorized here against our own database: the clicker must be
// an admin of the installing workspace now, whatever Slack thinks of them. Answers go to the
// interaction's response_url (ephemeral: only the clicker sees it) or, from the App Home, which
// has none, to a DM; the clicker's App Home is published again after each action.

type Json = Record<string, unknown>
type Team = NonNullable<Awaited<ReturnType<typeof teamContext>>>

export const USAGE = 'Usage: `/invite someone@example.com [admin|member]`, or `/invite link` for an invite link'

/** The e-mail and role of `/invite` text, or null: the same parser and validator as `@bot invite`. */
export function parseInviteText (text: string): { email: string, role: Role } | null {
  const cmd = parseCommand(`invite ${text}`)
  return cmd.kind === 'invite' ? cmd : null
}

/** The addresses typed into the Invite people modal, and those that are not addresses. */
export function parseEmailList (text: string): { emails: string[], invalid: string[] } {
  const parts = text.split(/[\s,;]+/).filter(p => p !== '')
  const invalid = parts.filter(p => storedAddress(p) === null)
  return { emails: [...new Set(parts.map(storedAddress).filter(e => e !== null))], invalid }
}

/**
 * What identifies one interaction, whichever delivery of it this is: a click is its user, its
 * container (message or view), its block and action and Slack's action_ts; a modal's submission
 * is its user and the view's id and hash; a shortcut its user, callback and action_ts. trigger_id
 * names one delivery only (a relay or a replay may bring the same click under another), so it is
 * the identity only of what has nothing better. Null when nothing identifies it.
 * (Before, trigger_id alone: the same click under five trigger_ids resent five e-mails.)
 */
export function interactionIdentity (payload: Json): string | null {
  // Slack's ids are per team: the team is part of every identity.
  const team = str((payload.team as Json | undefined)?.id) ?? ''
  const user = `${team}:${str((payload.user as Json | undefined)?.id) ?? ''}`
  const type = str(payload.type) ?? ''
  if (type === 'block_actions') {
    const action = ((Array.isArray(payload.actions) ? payload.actions : []) as unknown[])[0] as Json | undefined
    const actionTs = str(action?.action_ts)
    if (actionTs !== null) {
      const container = (payload.container ?? {}) as Json
      const where = str(container.message_ts) ?? str(container.view_id) ??
        str((payload.view as Json | undefined)?.id) ?? ''
      return ['click', user, str(container.channel_id) ?? '', where, str(action?.block_id) ?? '',
        str(action?.action_id) ?? '', actionTs].join(':')
    }
  } else if (type === 'view_submission' || type === 'view_closed') {
    const view = (payload.view ?? {}) as Json
    const id = str(view.id)
    if (id !== null) return [type, user, id, str(view.hash) ?? ''].join(':')
  } else if (type === 'shortcut' || type === 'message_action') {
    const actionTs = str(payload.action_ts)
    if (actionTs !== null) return [type, user, str(payload.callback_id) ?? '', actionTs].join(':')
  }
  const triggerId = str(payload.trigger_id)
  return triggerId !== null ? `trigger:${triggerId}` : null
}

export async function handleCommand (deps: SlackBotDeps, teamId: string, form: Json): Promise<Outcome> {
  const team = await teamContext(deps, teamId)
  const responseUrl = str(form.response_url)
  const slackUser = str(form.user_id)
  if (team === null || responseUrl === null || slackUser === null) return { status: 'ignored' }
  const say = async (text: string) => { await deps.api.respond(responseUrl, { response_type: 'ephemeral', text }) }
  if (isLinkCommand(str(form.text) ?? '')) {
    const { text, outcome } = await inviteLinkFromChat(deps, await personBehind(deps, team.inst, team.token, slackUser))
    await say(text)
    return outcome
  }
  const cmd = parseInviteText(str(form.text) ?? '')
  if (cmd === null) {
    await say(USAGE)
    return { status: 'processed', error: 'usage' }
  }
  const person = await personBehind(deps, team.inst, team.token, slackUser)
  const { text, outcome } = await inviteOrRequest(deps, person, cmd)
  await say(text)
  return outcome
}

export async function handleInteraction (deps: SlackBotDeps, teamId: string, payload: Json): Promise<Outcome> {
  const team = await teamContext(deps, teamId)
  const slackUser = str((payload.user as Json | undefined)?.id)
  if (team === null || slackUser === null) return { status: 'ignored' }
  const person = await personBehind(deps, team.inst, team.token, slackUser)
  const responseUrl = str(payload.response_url)
  const tell = async (text: string) => {
    if (responseUrl !== null) {
      await deps.api.respond(responseUrl, { response_type: 'ephemeral', replace_original: false, text })
    } else {
      await deps.api.postMessage(team.token, { channel: slackUser, text })
    }
  }
  const ctx: Ctx = { deps, team, slackUser, person, tell }
  let outcome: Outcome
  switch (payload.type) {
    case 'block_actions':
      outcome = await blockAction(ctx, payload)
      break
    case 'view_submission':
      outcome = await viewSubmission(ctx, payload)
      break
    case 'shortcut':
    case 'message_action':
      outcome = await shortcut(ctx, payload)
      break
    default:
      return { status: 'ignored' }
  }
  // The App Home reflects the action at once (a no-op for someone who never opened it).
  if (outcome.status === 'processed') await publishHome(deps, team, slackUser)
  return outcome
}

interface Ctx {
  deps: SlackBotDeps
  team: Team
  slackUser: string
  person: Principal | null
  tell: (text: string) => Promise<void>
}

const refused: Outcome = { status: 'processed', error: 'refused: not an admin of the workspace' }

/** The admin behind the click, or null after telling the clicker they may not. */
async function adminOrRefuse (ctx: Ctx): Promise<Principal | null> {
  if (ctx.person?.role === 'admin') return ctx.person
  await ctx.tell('Sorry, only admins of this workspace can do that.')
  return null
}

/** Runs a service call; a registry error is told to the clicker (it is an expected outcome). */
async function attempt (ctx: Ctx, what: string, work: () => Promise<unknown>): Promise<Outcome> {
  try {
    await work()
    return { status: 'processed' }
  } catch (err) {
    if (!isServiceError(err)) throw err
    await ctx.tell(`Could not ${what}: ${escapeSlackText(err.message)}`)
    return { status: 'processed', error: err.code }
  }
}

async function blockAction (ctx: Ctx, payload: Json): Promise<Outcome> {
  const action = ((payload.actions ?? []) as Json[])[0] ?? {}
  const value = str(action.value) ?? ''
  const { deps } = ctx
  switch (action.action_id) {
    case ACTION.approve:
    case ACTION.approveMember:
    case ACTION.approveAdmin: {
      const admin = await adminOrRefuse(ctx)
      if (admin === null) return refused
      const role: Role | undefined = action.action_id === ACTION.approveAdmin
        ? 'admin'
        : action.action_id === ACTION.approveMember ? 'member' : undefined
      // The messages and the requester's DM follow from the service's notice (notices.ts).
      return await attempt(ctx, 'approve the request', async () => {
        await deps.inviteRequests.approve(admin, value, role !== undefined ? { role } : {})
      })
    }
    case ACTION.deny: {
      const admin = await adminOrRefuse(ctx)
      if (admin === null) return refused
      const triggerId = str(payload.trigger_id)
      // A button's value is only what Slack sends back: a request of another workspace is not found.
      const request = await deps.inviteRequests.find(admin, value)
      if (request?.status !== 'pending' || triggerId === null) {
        await ctx.tell('That request is no longer open (decided, expired or unknown).')
        return { status: 'processed', error: 'INVITE_REQUEST_NOT_PENDING' }
      }
      await deps.api.openView(ctx.team.token, triggerId, denyModal(request.id, request.email))
      return { status: 'processed' }
    }
    case ACTION.resend: {
      const admin = await adminOrRefuse(ctx)
      if (admin === null) return refused
      return await attempt(ctx, 'resend the invitation', async () => { await deps.invitations.resend(admin, value) })
    }
    case ACTION.revoke: {
      const admin = await adminOrRefuse(ctx)
      if (admin === null) return refused
      return await attempt(ctx, 'revoke the invitation', async () => { await deps.invitations.revoke(admin, value) })
    }
    case ACTION.openInvite:
      return await openInviteModal(ctx, str(payload.trigger_id))
    default:
      return { status: 'ignored' }
  }
}

async function shortcut (ctx: Ctx, payload: Json): Promise<Outcome> {
  if (payload.callback_id !== CALLBACK.invite) return { status: 'ignored' }
  return await openInviteModal(ctx, str(payload.trigger_id))
}

async function openInviteModal (ctx: Ctx, triggerId: string | null): Promise<Outcome> {
  if (ctx.person === null) {
    await ctx.tell(NOT_ALLOWED)
    return refused
  }
  if (triggerId === null) return { status: 'ignored' }
  await ctx.deps.api.openView(ctx.team.token, triggerId, inviteModal())
  return { status: 'processed' }
}

/** A value typed or chosen in a modal: view.state.values[block][action]. */
function stateValue (view: Json, block: string, action: string): string | null {
  const values = ((view.state as Json | undefined)?.values ?? {}) as Record<string, Record<string, Json>>
  const input = values[block]?.[action]
  return str(input?.value) ?? str((input?.selected_option as Json | undefined)?.value)
}

async function viewSubmission (ctx: Ctx, payload: Json): Promise<Outcome> {
  const view = (payload.view ?? {}) as Json
  switch (view.callback_id) {
    case CALLBACK.deny: {
      const admin = await adminOrRefuse(ctx)
      if (admin === null) return refused
      const reason = stateValue(view, 'reason', 'reason')
      return await attempt(ctx, 'deny the request', async () => {
        await ctx.deps.inviteRequests.deny(admin, str(view.private_metadata) ?? '', reason !== null ? { reason } : {})
      })
    }
    case CALLBACK.invite: {
      // The addresses were validated before the acknowledgement (service.ts answers errors).
      const { emails } = parseEmailList(stateValue(view, 'emails', 'emails') ?? '')
      const role: Role = stateValue(view, 'role', 'role') === 'admin' ? 'admin' : 'member'
      const lines: string[] = []
      let failed = false
      for (const email of emails) {
        const { text, outcome } = await inviteOrRequest(ctx.deps, ctx.person, { email, role })
        lines.push(text)
        failed ||= outcome.status === 'failed'
      }
      await ctx.tell(lines.join('\n'))
      return failed ? { status: 'failed', error: 'internal error while inviting' } : { status: 'processed' }
    }
    default:
      return { status: 'ignored' }
  }
}
