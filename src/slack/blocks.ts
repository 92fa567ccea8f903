import { escapeSlackText as esc } from './commands.js'

// The Block Kit the app posts, updates, opens and publishes: the admins' message about an invite
// request and its decided form, the two modals (deny with a reason, invite several people) and
// the App Home. Plain JSON (Slack's documented shapes); every piece of user text is escaped.
// Action ids and callback ids are what interactions.ts dispatches on.

type Block = Record<string, unknown>

export const ACTION = {
  approve: 'request_approve',
  approveMember: 'request_approve_member',
  approveAdmin: 'request_approve_admin',
  deny: 'request_deny',
  resend: 'invitation_resend',
  revoke: 'invitation_revoke',
  openInvite: 'open_invite_modal'
} as const

export const CALLBACK = { deny: 'deny_request', invite: 'invite_people' } as const

const text = (s: string) => ({ type: 'plain_text', text: s, emoji: true })
const mrkdwn = (s: string): Block => ({ type: 'section', text: { type: 'mrkdwn', text: s } })
const button = (label: string, actionId: string, value: string, style?: 'primary' | 'danger'): Block => ({
  type: 'button', text: text(label), action_id: actionId, value, ...(style !== undefined ? { style } : {})
})

interface RequestLike { id: string, email: string, role: string }

/** The message each admin gets about a new request. */
/** `requester` null: the person asked to join themselves (an invite link, a verified domain). */
export function requestMessage (req: RequestLike, requester: string | null): { text: string, blocks: Block[] } {
  const line = requester === null
    ? `*${esc(req.email)}* asks to join as ${req.role}.`
    : `${esc(requester)} asks to invite *${esc(req.email)}* as ${req.role}.`
  return {
    text: requester === null
      ? `${req.email} asks to join as ${req.role}`
      : `${requester} asks to invite ${req.email} as ${req.role}`,
    blocks: [
      mrkdwn(line),
      {
        type: 'actions',
        block_id: 'invite_request',
        elements: [
          button('Approve as member', ACTION.approveMember, req.id, 'primary'),
          button('Approve as admin', ACTION.approveAdmin, req.id),
          button('Deny', ACTION.deny, req.id, 'danger')
        ]
      }
    ]
  }
}

/** The same message once decided: the buttons give way to who decided. */
export function decidedMessage (
  req: RequestLike & { status: string, reason: string | null },
  decider: string
): { text: string, blocks: Block[] } {
  const what = req.status === 'approved'
    ? `Approved by ${decider}: *${esc(req.email)}* is invited as ${req.role}.`
    : `Denied by ${decider}: *${esc(req.email)}* is not invited.` +
      (req.reason !== null ? ` Reason: ${esc(req.reason)}` : '')
  return { text: what.replaceAll('*', ''), blocks: [mrkdwn(what)] }
}

export function denyModal (requestId: string, email: string): Block {
  return {
    type: 'modal',
    callback_id: CALLBACK.deny,
    private_metadata: requestId,
    title: text('Deny the request'),
    submit: text('Deny'),
    close: text('Cancel'),
    blocks: [
      mrkdwn(`Deny the request to invite *${esc(email)}*?`),
      {
        type: 'input',
        block_id: 'reason',
        optional: true,
        label: text('Reason (the requester sees it)'),
        element: { type: 'plain_text_input', action_id: 'reason', multiline: true, max_length: 500 }
      }
    ]
  }
}

const roleOption = (role: string) => ({ text: text(role), value: role })

export function inviteModal (): Block {
  return {
    type: 'modal',
    callback_id: CALLBACK.invite,
    title: text('Invite people'),
    submit: text('Invite'),
    close: text('Cancel'),
    blocks: [
      {
        type: 'input',
        block_id: 'emails',
        label: text('E-mail addresses (one per line, or separated by commas)'),
        element: { type: 'plain_text_input', action_id: 'emails', multiline: true, max_length: 3000 }
      },
      {
        type: 'input',
        block_id: 'role',
        label: text('Role'),
        element: {
          type: 'static_select',
          action_id: 'role',
          initial_option: roleOption('member'),
          options: [roleOption('member'), roleOption('admin')]
        }
      }
    ]
  }
}

const inviteButton: Block = {
  type: 'actions',
  block_id: 'home_invite',
  elements: [button('Invite people', ACTION.openInvite, 'home', 'primary')]
}

interface HomeInvitation { id: string, email: string, role: string, expiresAt: string }
interface HomeRequest { id: string, email: string, role: string, status: string }

/** App Home for an admin: pending invitations, open requests, and the Invite people button. */
export function adminHome (invitations: HomeInvitation[], requests: HomeRequest[]): Block {
  const blocks: Block[] = [
    { type: 'header', text: text('Invitations') },
    inviteButton,
    { type: 'divider' },
    mrkdwn(`*Open invite requests* (${requests.length})`)
  ]
  for (const r of requests) {
    blocks.push(mrkdwn(`*${esc(r.email)}* as ${r.role}`), {
      type: 'actions',
      block_id: `request_${r.id}`,
      elements: [button('Approve', ACTION.approve, r.id, 'primary'), button('Deny', ACTION.deny, r.id, 'danger')]
    })
  }
  blocks.push({ type: 'divider' }, mrkdwn(`*Pending invitations* (${invitations.length})`))
  for (const i of invitations) {
    blocks.push(mrkdwn(`*${esc(i.email)}* as ${i.role}, expires ${i.expiresAt.slice(0, 10)}`), {
      type: 'actions',
      block_id: `invitation_${i.id}`,
      elements: [button('Resend', ACTION.resend, i.id), button('Revoke', ACTION.revoke, i.id, 'danger')]
    })
  }
  return { type: 'home', blocks }
}

/** App Home for a member: their own requests (and the button when they may invite or ask). */
export function memberHome (requests: HomeRequest[], mayAsk: boolean): Block {
  const blocks: Block[] = [{ type: 'header', text: text('Your invite requests') }]
  if (mayAsk) blocks.push(inviteButton)
  if (requests.length === 0) blocks.push(mrkdwn('You have not asked to invite anyone yet.'))
  for (const r of requests) blocks.push(mrkdwn(`*${esc(r.email)}* as ${r.role}: ${r.status}`))
  return { type: 'home', blocks }
}
