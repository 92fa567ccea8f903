import type { FakeRequest } from './fake-http.js'

/** The WorkOS API's invitation object, as its fake answers a create or a re-send for `org`. */
export function workosInvitationFor (req: FakeRequest, id: string, org: string) {
  const body = (req.json ?? {}) as { email?: string }
  const now = new Date().toISOString()
  return {
    object: 'invitation',
    id,
    email: body.email ?? 'x@example.com',
    state: 'pending',
    accepted_at: null,
    revoked_at: null,
    expires_at: now,
    organization_id: org,
    inviter_user_id: null,
    accepted_user_id: null,
    token: 'provider-token',
    accept_invitation_url: 'https://auth.example/invite?invitation_token=provider-token',
    created_at: now,
    updated_at: now
  }
}
