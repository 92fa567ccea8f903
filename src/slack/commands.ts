import { storedAddress } from '../lib/email.js'

// The bot's one command, parsed from a message's text as Slack delivers it: mentions arrive as
// `<@U123>`, e-mail addresses as `<mailto:a@b.c|a@b.c>`, and &, <, > are HTML-escaped.

export type BotCommand =
  | { kind: 'invite', email: string, role: 'admin' | 'member' }
  | { kind: 'help' }

export function parseCommand (text: string): BotCommand {
  const cleaned = text
    .replace(/<@[A-Z0-9]+(\|[^>]*)?>/gi, ' ')
    .replace(/<mailto:([^|>]+)(\|[^>]*)?>/gi, '$1')
    .replace(/\s+/g, ' ')
    .trim()
  const m = /^invite ([^ ]+)(?: (admin|member))?$/i.exec(cleaned)
  if (m === null) return { kind: 'help' }
  // The one e-mail rule of every entry point (the contract's format email); `a,b@x.example`
  // would otherwise reach the mailer, which reads it as two addresses.
  const email = storedAddress(m[1] as string)
  if (email === null) return { kind: 'help' }
  const role = (m[2]?.toLowerCase() ?? 'member') as 'admin' | 'member'
  return { kind: 'invite', email, role }
}

/** Escape text for Slack's mrkdwn (only &, < and > are special). */
export function escapeSlackText (s: string): string {
  return s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')
}

export const HELP_TEXT = 'I can invite people to your workspace. ' +
  'Say `invite someone@example.com` (as a member) or `invite someone@example.com admin` (admins only). ' +
  'The signup link goes to the invitee by e-mail; I never post it here.'
