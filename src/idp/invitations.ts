import type { WorkOS } from '@workos-inc/node'
import type { Config } from '../config.js'
import type { Role } from '../db/users.js'
import { createWorkOS } from './workos-client.js'

// The identity provider's invitation API as a port. Every call is bounded by WORKOS_TIMEOUT_MS
// (the SDK's `timeout` option; its default is a minute) and never throws: the caller needs to tell
// "sent", "the provider says this person already exists" (→ 409) and "unavailable" (→ fallback).

type IdpInvitationOutcome =
  | { kind: 'sent', invitationId: string }
  | { kind: 'user_exists', reason: string }
  | { kind: 'unavailable', reason: string }

export interface IdentityProviderInvitations {
  readonly kind: 'workos' | 'none'
  send(input: {
    email: string,
    organizationId: string,
    role: Role,
    inviterUserId: string | null,
    expiresInDays: number
  }): Promise<IdpInvitationOutcome>
  resend(invitationId: string): Promise<IdpInvitationOutcome>
  /** Best effort; resolves false when the provider could not be told. */
  revoke(invitationId: string): Promise<boolean>
}

export const noIdentityProvider: IdentityProviderInvitations = {
  kind: 'none',
  async send () { return { kind: 'unavailable', reason: 'no identity provider configured' } },
  async resend () { return { kind: 'unavailable', reason: 'no identity provider configured' } },
  async revoke () { return false }
}

/** The WorkOS SDK's error shapes we read: status, code and message (no raw bodies are kept). */
interface SdkError { status?: unknown, code?: unknown, error?: unknown, message?: unknown, name?: unknown }

// WorkOS says the invitee already has an account or membership with codes such as
// user_already_organization_member or messages like "User is already a member": a user or
// membership that already exists. "An invitation already exists" is not that (no 409 for it).
function saysUserExists (text: string): boolean {
  return /user|member/i.test(text) && /already|exist/i.test(text) && !/invit/i.test(text)
}

function classifyIdpError (err: unknown): IdpInvitationOutcome {
  const e = (err ?? {}) as SdkError
  const status = typeof e.status === 'number' ? e.status : null
  const code = typeof e.code === 'string' ? e.code : (typeof e.error === 'string' ? e.error : '')
  const message = typeof e.message === 'string' ? e.message : ''
  const refused = status !== null && status >= 400 && status < 500 && status !== 408 && status !== 429
  if (refused && (saysUserExists(code) || saysUserExists(message))) {
    return { kind: 'user_exists', reason: `${status} ${code}`.trim() }
  }
  const name = typeof e.name === 'string' ? e.name : 'Error'
  return {
    kind: 'unavailable',
    reason: status !== null ? `status ${status}${code !== '' ? ' ' + code : ''}` : `${name}: ${message.slice(0, 200)}`
  }
}

function createWorkosInvitations (workos: WorkOS): IdentityProviderInvitations {
  const call = async (fn: () => Promise<{ id: string }>): Promise<IdpInvitationOutcome> => {
    try {
      // Bounded by the SDK's own `timeout` (WORKOS_TIMEOUT_MS, see workos-client.ts): it aborts
      // the request and answers 408, which classifyIdpError reads as "unavailable".
      const inv = await fn()
      return { kind: 'sent', invitationId: inv.id }
    } catch (err) {
      return classifyIdpError(err)
    }
  }
  return {
    kind: 'workos',
    async send (input) {
      return await call(async () => await workos.userManagement.sendInvitation({
        email: input.email,
        organizationId: input.organizationId,
        roleSlug: input.role,
        expiresInDays: input.expiresInDays,
        ...(input.inviterUserId !== null ? { inviterUserId: input.inviterUserId } : {})
      }))
    },
    async resend (invitationId) {
      return await call(async () => await workos.userManagement.resendInvitation(invitationId))
    },
    async revoke (invitationId) {
      const outcome = await call(async () => await workos.userManagement.revokeInvitation(invitationId))
      return outcome.kind === 'sent'
    }
  }
}

/** The adapter the configuration selects: WorkOS when WORKOS_API_KEY/CLIENT_ID are set, else none. */
export function createIdentityProviderInvitations (config: Config): IdentityProviderInvitations {
  return config.workos !== null ? createWorkosInvitations(createWorkOS(config.workos)) : noIdentityProvider
}
