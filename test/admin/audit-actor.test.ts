import t from 'tap'
import { buildWithSlack, envelope, install, mention, sendEvent } from '../helpers/slack.js'
import { createApiKey, mcpRequest } from '../helpers/mcp.js'

// One person acting through the three doors — REST (session), MCP (API key) and the Slack bot —
// is named the same way in the audit trail: the door is the actor type, the label is the person.

t.test('the same admin gets the same audit actor label from REST and chat; a key is labelled by its name', async t => {
  const { h, slack } = await buildWithSlack(t)
  const admin = await h.signIn()
  // A display name that differs from the e-mail: one copy of auditActorOf used to label API keys by it.
  await h.db.query('UPDATE users SET name = $1 WHERE id = $2', ['Ada Lovelace', admin.userId])
  t.equal((await install(h, admin)).statusCode, 302, 'Slack installed')
  slack.emails.set('U0ADMIN1', admin.email)

  const rest = await h.inject({
    method: 'POST',
    url: '/api/users/invite',
    headers: { cookie: admin.cookie, 'content-type': 'application/json' },
    payload: { email: 'rest@example.com', role: 'member' }
  })
  t.equal(rest.statusCode, 200, 'REST invite')
  const key = await createApiKey(h, admin, 'assistant')
  const mcp = await mcpRequest(
    h, key.secret, 'tools/call', { name: 'invite_user', arguments: { email: 'mcp@example.com' } }
  )
  t.equal(mcp.statusCode, 200, 'MCP invite')
  t.notOk(mcp.json().result?.isError, 'the MCP tool succeeded')
  t.equal((await sendEvent(h, envelope(mention('U0ADMIN1', 'invite chat@example.com')))).statusCode, 200, 'chat invite')
  await h.app.services.slack.whenIdle()

  const rows = await h.db.query<{ email: string, actor_type: string, actor_id: string, actor_label: string }>(
    `SELECT i.email, a.actor_type, a.actor_id, a.actor_label FROM audit_events a JOIN invitations i ON a.target_id = i.id::text
      WHERE a.action = 'invitation.created' ORDER BY i.email`)
  t.same(rows.rows, [
    { email: 'chat@example.com', actor_type: 'chat_platform', actor_id: admin.userId, actor_label: admin.email },
    { email: 'mcp@example.com', actor_type: 'api_key', actor_id: key.id, actor_label: 'assistant' },
    { email: 'rest@example.com', actor_type: 'user', actor_id: admin.userId, actor_label: admin.email }
  ], 'a person is labelled by their e-mail whichever door they used; a key is its own actor, by its name')
  const created = await h.db.query<{ actor_type: string, actor_label: string }>(
    "SELECT actor_type, actor_label FROM audit_events WHERE action = 'api_key.created'"
  )
  t.same(
    created.rows, [{ actor_type: 'user', actor_label: admin.email }], 'api-key and member actions use the same rule'
  )
})
