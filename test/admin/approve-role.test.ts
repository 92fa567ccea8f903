import t from 'tap'
import { build } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { startSmtp } from '../helpers/smtp.js'
import { createApiKey, mcpRequest } from '../helpers/mcp.js'

// An approval grants what the approving admin names, and no more than `member` when they name
// nothing: a member asking for an admin invitation, approved with an empty body (or by an MCP
// tool call without `role`), gets a member invitation. Every door calls the same service.

t.test('approving an invite request: member unless the admin names the role', async t => {
  const smtp = await startSmtp(t)
  const h = await build(t, { env: { SMTP_URL: smtp.url } })
  const admin = await h.signIn({ role: 'admin', email: 'boss@example.com' })
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId, email: 'grace@example.com' })
  const policy = await h.inject({
    method: 'PATCH', url: '/api/workspace/settings', headers: { cookie: admin.cookie }, payload: { invitePolicy: 'request' }
  })
  t.equal(policy.statusCode, 200)

  const ask = async (email: string): Promise<string> => {
    const res = await h.inject({
      method: 'POST', url: '/api/invite-requests', headers: { cookie: member.cookie }, payload: { email, role: 'admin' }
    })
    t.equal(res.statusCode, 201, res.body)
    t.equal(res.json().role, 'admin', 'the member asked for an admin')
    return res.json().id as string
  }
  const invitedRole = async (email: string): Promise<string | undefined> =>
    (await h.db.query<{ role: string }>('SELECT role FROM invitations WHERE email = $1', [email])).rows[0]?.role

  await t.test('an empty body (and no body at all) grants member', async t => {
    for (const [email, payload] of [['empty@example.com', {}], ['nobody@example.com', undefined]] as const) {
      const id = await ask(email)
      const url = `/api/invite-requests/${id}/approve`
      const res = await h.inject({
        method: 'POST',
        url,
        headers: { cookie: admin.cookie, ...(payload !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(payload !== undefined ? { payload } : {})
      })
      assertContract(t, 'POST', url, res)
      t.equal(res.statusCode, 200, res.body)
      t.equal(res.json().request.role, 'member', 'the request says what was granted')
      t.equal(await invitedRole(email), 'member', 'the invitation is for a member')
    }
    const events = await h.db.query<{ payload: { role: string } }>(
      "SELECT payload FROM audit_events WHERE action = 'invite_request.approved' ORDER BY id")
    t.same(events.rows.map(r => r.payload.role), ['member', 'member'], 'and so does the audit trail')
  })

  await t.test('the admin naming the role grants it', async t => {
    const id = await ask('named@example.com')
    const res = await h.inject({
      method: 'POST', url: `/api/invite-requests/${id}/approve`, headers: { cookie: admin.cookie }, payload: { role: 'admin' }
    })
    t.equal(res.statusCode, 200, res.body)
    t.equal(res.json().request.role, 'admin')
    t.equal(await invitedRole('named@example.com'), 'admin')
  })

  await t.test('the MCP tool without role grants member too', async t => {
    const id = await ask('tool@example.com')
    const key = await createApiKey(h, admin)
    const res = await mcpRequest(h, key.secret, 'tools/call', { name: 'approve_invite_request', arguments: { id } })
    t.equal(res.statusCode, 200, res.body)
    t.notOk((res.json() as { result?: { isError?: boolean } }).result?.isError, res.body)
    t.equal(await invitedRole('tool@example.com'), 'member')
  })
})
