import type { MailMessage } from '../ports/mailer.js'
import type { Role } from '../db/users.js'
import { escapeHtml } from '../lib/html.js'

// The one invitation e-mail (fallback path, resend, create-admin): plain text and HTML naming
// the workspace and who invited. Every value is escaped in the HTML part: workspace names and
// inviter names are user input.

export interface InvitationEmailInput {
  to: string
  workspaceName: string
  /** Name or e-mail of the inviting admin; null for the first admin made by create-admin. */
  inviter: string | null
  role: Role
  link: string
  expiresAt: Date
  /** The one reminder before expiry (src/invitations/reminders.ts): same link, said as a reminder. */
  reminder?: boolean
}

/** A header-safe, single-line version of user text (no CR/LF in the subject). */
function oneLine (s: string): string {
  return s.replace(/[\r\n\t]+/g, ' ').trim().slice(0, 150)
}

export function invitationEmail (i: InvitationEmailInput): MailMessage {
  const workspace = oneLine(i.workspaceName)
  const who = i.inviter !== null ? oneLine(i.inviter) : null
  const asRole = i.role === 'admin' ? 'an admin' : 'a member'
  const expires = i.expiresAt.toUTCString()
  const reminder = i.reminder === true ? 'Reminder: ' : ''
  const subject = reminder +
    (who !== null ? `${who} invited you to join ${workspace}` : `You are invited to join ${workspace}`)
  const lead = reminder + (who !== null
    ? `${who} invited you to join the workspace "${workspace}" as ${asRole}.`
    : `You are invited to join the workspace "${workspace}" as ${asRole}.`)
  const text = [
    lead,
    '',
    'Accept the invitation and create your account here:',
    i.link,
    '',
    `The link works once and expires on ${expires}.`,
    'If you did not expect this invitation, you can ignore this e-mail.'
  ].join('\n')
  const htmlLead = reminder + (who !== null
    ? `<strong>${escapeHtml(who)}</strong> invited you to join the workspace ` +
      `<strong>${escapeHtml(workspace)}</strong> as ${asRole}.`
    : `You are invited to join the workspace <strong>${escapeHtml(workspace)}</strong> as ${asRole}.`)
  const href = escapeHtml(i.link)
  const html = `<!doctype html>
<html><body style="font-family: sans-serif; line-height: 1.5">
<p>${htmlLead}</p>
<p><a href="${href}">Accept the invitation</a></p>
<p>Or copy this link into your browser:<br><code>${href}</code></p>
<p style="color: #666">The link works once and expires on ${escapeHtml(expires)}. \
If you did not expect this invitation, you can ignore this e-mail.</p>
</body></html>`
  return { to: i.to, subject, text, html, link: i.link }
}

/** The signup link of the fallback path: always APP_URL, never anything from a request. */
export function signupLink (appUrl: string, token: string): string {
  return `${appUrl}/signup?token=${encodeURIComponent(token)}`
}
