import t, { type Test } from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { assertContract } from '../helpers/contract.js'
import { startSmtp } from '../helpers/smtp.js'
import { SIGNING_SECRET, TEAM_ID, buildWithSlack, install } from '../helpers/slack.js'
import { slackSignature } from '../../src/slack/signature.js'

// A chat action acts once per click, whatever carries it: one signed Resend click replayed five
// times (one after the other, and all at once), or the same click delivered again under another
// trigger_id, sends one e-mail. A click is identified by what Slack gives it (the user, the
// container, the action and its action_ts), not only by the trigger_id of its delivery.

const INTERACTIONS = '/api/slack/interactions'
const smtp = await startSmtp(t)
const { h, slack } = await buildWithSlack(t, { env: { SMTP_URL: smtp.url } })
const admin = await h.signIn({ role: 'admin' })
t.equal((await install(h, admin)).statusCode, 302, 'installed')
slack.emails.set('U0ADMIN1', admin.email)
const idle = async () => { await h.app.services.slack.whenIdle() }

async function signed (payload: unknown): Promise<LightMyRequestResponse> {
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString()
  const ts = String(Math.floor(h.clock.now().getTime() / 1000))
  return await h.inject({
    method: 'POST',
    url: INTERACTIONS,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': ts,
      'x-slack-signature': slackSignature(SIGNING_SECRET, ts, body)
    },
    payload: body
  })
}

let seq = 0
/** A Resend click in the App Home (docs.slack.dev, block_actions payload from a view). */
function resendClick (invitationId: string, o: { triggerId?: string | null, actionTs?: string } = {}) {
  seq++
  const triggerId = o.triggerId === undefined ? `13345224609.738474920.${seq}` : o.triggerId
  return {
    type: 'block_actions',
    user: { id: 'U0ADMIN1', username: 'admin', team_id: TEAM_ID },
    api_app_id: 'A0APP001',
    token: 'gIkuvaNzQIHg97ATvDxqgjtO',
    container: { type: 'view', view_id: 'V0HOME01' },
    ...(triggerId !== null ? { trigger_id: triggerId } : {}),
    team: { id: TEAM_ID, domain: 'acme' },
    view: { id: 'V0HOME01', type: 'home', hash: '1700000000.abcdef' },
    actions: [{
      type: 'button',
      action_id: 'invitation_resend',
      block_id: 'inv_block',
      value: invitationId,
      text: { type: 'plain_text', text: 'Resend' },
      action_ts: o.actionTs ?? `1700000200.${String(seq).padStart(6, '0')}`
    }]
  }
}

/** A fresh invitation (one e-mail); returns its id and the number of e-mails so far. */
async function invitation (t: Test, email: string): Promise<{ id: string, sent: number }> {
  const res = await h.inject({
    method: 'POST', url: '/api/users/invite', headers: { cookie: admin.cookie }, payload: { email, role: 'member' }
  })
  t.equal(res.statusCode, 200, `invited ${email}`)
  await smtp.nextMessage(smtp.messages.length - 1)
  const row = (await h.db.query<{ id: string }>('SELECT id FROM invitations WHERE email = $1', [email])).rows[0]
  return { id: row?.id ?? '', sent: smtp.messages.length }
}

const mailsTo = (email: string) => smtp.messages.filter(m => m.to.includes(email)).length

await t.test('one signed click replayed 5 times, one after the other: one resend, one e-mail', async t => {
  const { id } = await invitation(t, 'replay@example.com')
  const click = resendClick(id)
  for (let i = 0; i < 5; i++) {
    const res = await signed(click)
    t.equal(res.statusCode, 200, `delivery ${i + 1} acknowledged`)
    assertContract(t, 'POST', INTERACTIONS, res)
  }
  await idle()
  t.equal(mailsTo('replay@example.com'), 2, 'the invitation and one resend')
})

await t.test('one click replayed 5 times at once: one resend', async t => {
  const { id } = await invitation(t, 'burst@example.com')
  const click = resendClick(id)
  const answers = await Promise.all(Array.from({ length: 5 }, async () => await signed(click)))
  t.same(answers.map(r => r.statusCode), [200, 200, 200, 200, 200])
  await idle()
  t.equal(mailsTo('burst@example.com'), 2, 'the invitation and one resend')
})

await t.test('the same click under five trigger_ids, or with none: one resend', async t => {
  const { id } = await invitation(t, 'relayed@example.com')
  const first = resendClick(id)
  const actionTs = first.actions[0]?.action_ts ?? ''
  const deliveries = [
    first,
    ...Array.from({ length: 3 }, () => resendClick(id, { actionTs })),
    resendClick(id, { actionTs, triggerId: null })
  ]
  for (const click of deliveries) t.equal((await signed(click)).statusCode, 200)
  await Promise.all(Array.from({ length: 3 }, async () => await signed(resendClick(id, { actionTs }))))
  await idle()
  t.equal(mailsTo('relayed@example.com'), 2, 'the invitation and one resend')
})

await t.test('two clicks (two action_ts) are two actions', async t => {
  const { id } = await invitation(t, 'twice@example.com')
  t.equal((await signed(resendClick(id))).statusCode, 200)
  await idle()
  t.equal((await signed(resendClick(id))).statusCode, 200)
  await idle()
  t.equal(mailsTo('twice@example.com'), 3, 'the invitation and two resends')
})

await t.test('an interaction with nothing that identifies it is refused: 400, nothing done', async t => {
  const { id } = await invitation(t, 'anonymous@example.com')
  const click = resendClick(id, { triggerId: null })
  delete (click.actions[0] as { action_ts?: string }).action_ts
  const res = await signed(click)
  t.equal(res.statusCode, 400)
  assertContract(t, 'POST', INTERACTIONS, res)
  await idle()
  t.equal(mailsTo('anonymous@example.com'), 1, 'no resend')
})
