import t from 'tap'
import { build } from '../helpers/build.js'
import { startSmtp } from '../helpers/smtp.js'
import { createApiKey, mcpRequest } from '../helpers/mcp.js'
import { assertContract } from '../helpers/contract.js'
import { parseCommand } from '../../src/slack/commands.js'
import { validateFirstAdminInput } from '../../src/invitations/validate.js'
import { isEmailAddress } from '../../src/lib/email.js'
import { isServiceError } from '../../src/errors.js'

// One e-mail address rule for every entry point (src/lib/email.ts, the function behind the
// contract's `format: email`): REST, MCP, the chat bot, create-admin, and the invitation service
// itself as the last gate before the mailer. `a,b@x.example` once reached nodemailer from the
// chat bot, which delivered it to b@x.example; full-width and non-ASCII addresses refused by REST
// were accepted by the bot.

const REFUSED = [
  'a,b@x.example', 'ａ@example.com', 'ü@example.com', ' padded@example.com', 'a@b@example.com',
  `${'a'.repeat(250)}@example.com`
]
const ACCEPTED = 'ok.Person+tag@Example.com'

t.test('every entry point refuses what format email refuses, and sends nothing', async t => {
  const smtp = await startSmtp(t)
  const h = await build(t, { env: { SMTP_URL: smtp.url } })
  const admin = await h.signIn({ role: 'admin' })
  const key = (await createApiKey(h, admin)).secret
  const principal = {
    kind: 'session' as const,
    userId: admin.userId,
    workspaceId: admin.workspaceId,
    email: admin.email,
    name: null,
    role: 'admin' as const,
    sessionId: admin.sessionId,
    apiKeyId: null,
    requestId: null
  }

  for (const email of REFUSED) {
    t.notOk(isEmailAddress(email), `the rule: ${email}`)
    const rest = await h.inject({
      method: 'POST',
      url: '/api/users/invite',
      headers: { cookie: admin.cookie },
      payload: { email, role: 'member' }
    })
    t.equal(rest.statusCode, 400, `REST: ${email}`)
    assertContract(t, 'POST', '/api/users/invite', rest)

    const mcp = (await mcpRequest(
      h, key, 'tools/call', { name: 'invite_user', arguments: { email } }
    )).json().result as { isError?: boolean, structuredContent?: { code?: string } }
    t.equal(mcp.isError, true, `MCP: ${email}`)

    // In a chat message, spaces separate words: surrounding ones are not part of the address.
    if (email.trim() === email) {
      t.same(parseCommand(`invite ${email}`), { kind: 'help' }, `chat: ${email}`)
      t.same(
        parseCommand(`<@U1> invite <mailto:${email}|${email}>`), { kind: 'help' },
        `chat, as Slack sends a link: ${email}`
      )
    }

    t.not(validateFirstAdminInput({ email, workspaceName: 'Acme' }), null, `create-admin: ${email}`)

    // The service is the last gate, whoever calls it.
    const direct = await h.app.services.invitations.invite(
      principal, { email, role: 'member' }
    ).then(() => null, (err: unknown) => err)
    t.ok(isServiceError(direct) && direct.code === 'VALIDATION_FAILED', `invitation service: ${email}`)
  }
  const rows = await h.db.query('SELECT email FROM invitations')
  t.same(rows.rows, [], 'no invitation stored')
  t.equal(smtp.messages.length, 0, 'no e-mail sent')

  // And the same address is good everywhere, stored in lower case.
  t.ok(isEmailAddress(ACCEPTED))
  t.same(parseCommand(`invite ${ACCEPTED} admin`), { kind: 'invite', email: ACCEPTED.toLowerCase(), role: 'admin' })
  t.equal(validateFirstAdminInput({ email: ACCEPTED, workspaceName: 'Acme' }), null)
  const ok = await h.inject({
    method: 'POST',
    url: '/api/users/invite',
    headers: { cookie: admin.cookie },
    payload: { email: ACCEPTED, role: 'member' }
  })
  t.equal(ok.statusCode, 200)
  t.same((await smtp.nextMessage(0)).to, [ACCEPTED.toLowerCase()])
})
