import addFormatsModule, { type FormatsPlugin } from 'ajv-formats'
import { serviceError } from '../errors.js'

// The one e-mail address rule, for every entry point (REST via the contract's `format: email`,
// MCP, the chat bot, create-admin, the sign-in and verified-domain doors, and the addresses peers
// hand us: the identity provider, Slack, an e-mail provider's webhook), applied before anything
// is stored or compared, and as the last gate before the mailer: the very function
// ajv-formats uses for `format: email` (so what a standard validator of openapi.yaml accepts is
// exactly what is accepted: ASCII only, no commas, no surrounding spaces), at most 254
// characters (`maxLength`), compared and stored in lower case.

const EMAIL_MAX_LENGTH = 254

// ajv-formats is CommonJS: its default import is the plugin at run time, typed as the module.
const format = (addFormatsModule as unknown as FormatsPlugin).get('email', 'full') as RegExp

/** Whether `s` is an e-mail address as the contract's `format: email, maxLength: 254` says. */
export function isEmailAddress (s: string): boolean {
  return s.length <= EMAIL_MAX_LENGTH && format.test(s)
}

/** The address as stored and compared (lower case), or null when `s` is not one: for what a peer says. */
export function storedAddress (s: string): string | null {
  return isEmailAddress(s) ? s.toLowerCase() : null
}

/** The address as stored and compared (lower case); throws VALIDATION_FAILED when it is not one. */
export function emailAddress (s: string, field = 'email'): string {
  if (!isEmailAddress(s)) {
    throw serviceError(
      'VALIDATION_FAILED', [`${field} must be an e-mail address`],
      { errors: [{ in: 'body', field, message: 'must be an e-mail address' }] }
    )
  }
  return s.toLowerCase()
}

/**
 * A mailbox as MAIL_FROM writes it (`Acme <no-reply@acme.test>`, `"Acme" <…>` or a bare address):
 * its display name (null without one) and its address. The mailer keeps the address under a
 * workspace's From name; the workspace's default sender name takes the service's name from it.
 */
export function parseMailbox (mailbox: string): { name: string | null, address: string } {
  const m = /^\s*"?([^"<]*?)"?\s*<([^>]+)>\s*$/.exec(mailbox)
  if (m === null) return { name: null, address: mailbox.trim() }
  const name = (m[1] ?? '').trim()
  return { name: name === '' ? null : name, address: (m[2] ?? '').trim() }
}
