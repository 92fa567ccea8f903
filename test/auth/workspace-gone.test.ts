import t from 'tap'
import { build, principalOf } from '../helpers/build.js'
import { isServiceError } from '../../src/errors.js'

// One rule for a principal whose workspace is gone (deleted after the request was authenticated,
// or a chat or API-key principal built from a stale row): the caller is not signed in to anything,
// 401 UNAUTHENTICATED, as GET /api/users/me answers, and which every secured operation declares.
// It was 404 NOT_FOUND in the invitation, invite-request and settings services, a status those
// operations do not declare (NOT_FOUND names an operation's own resource, not the caller's).

t.test('every service answers a principal of a deleted workspace with UNAUTHENTICATED', async t => {
  const h = await build(t)
  const admin = await h.signIn({ role: 'admin' })
  const principal = principalOf(admin, 'admin')
  // An invitation made before the workspace goes: resending or revoking it afterwards is not a
  // 404 for the invitation (it went with the workspace) but the caller signed in to nothing.
  await h.app.services.invitations.invite(principal, { email: 'grace@example.com', role: 'member' })
  const made = await h.db.query<{ id: string }>('SELECT id FROM invitations WHERE workspace_id = $1', [admin.workspaceId])
  t.equal(made.rows.length, 1, 'an invitation exists before the workspace is deleted')
  const invitationId = made.rows[0]?.id as string
  await h.db.query('DELETE FROM workspaces WHERE id = $1', [admin.workspaceId])
  const { services } = h.app
  const calls: Record<string, () => Promise<unknown>> = {
    'invitations.invite': async () => await services.invitations.invite(principal, { email: 'ada@example.com', role: 'member' }),
    // A member's invitation reads the invite policy first: the workspace is gone there already.
    'invitations.invite (a member)': async () => await services.invitations.invite(principalOf(admin, 'member'), { email: 'ada@example.com', role: 'member' }),
    'inviteRequests.request': async () => await services.inviteRequests.request(principal, { email: 'ada@example.com', role: 'member' }),
    'workspaceSettings.get': async () => await services.workspaceSettings.get(principal),
    'workspace.get': async () => await services.workspace.get(principal),
    'workspaceSettings.update': async () => await services.workspaceSettings.update(principal, { invitePolicy: 'members' }),
    'inviteLinks.create': async () => await services.inviteLinks.create(principal, {}),
    'invitations.resend': async () => await services.invitations.resend(principal, invitationId),
    'invitations.revoke': async () => await services.invitations.revoke(principal, invitationId),
    // Reading one resource by id: the checklist's worked example (docs/architecture.md).
    'domains.get': async () => await services.domains.get(principal, '3d5f7a9b-1c2e-4f3a-8b4c-6d7e8f9a0b1c'),
    'ssoConnections.get': async () => await services.ssoConnections.get(principal, '5e7a9c1b-3d2f-4a6b-8c9d-0e1f2a3b4c5d'),
    'ssoConnections.create': async () => await services.ssoConnections.create(principal, {
      name: 'Okta', protocol: 'oidc', oidc: { issuer: 'https://acme.okta.com', clientId: 'c', clientSecret: 's' }
    })
  }
  for (const [name, call] of Object.entries(calls)) {
    const err = await call().then(() => null, (e: unknown) => e)
    t.ok(isServiceError(err), `${name}: a ServiceError`)
    t.match(err, { statusCode: 401, code: 'UNAUTHENTICATED' }, `${name}: 401 UNAUTHENTICATED`)
  }
})
