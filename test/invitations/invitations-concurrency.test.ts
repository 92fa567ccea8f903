import t from 'tap'
import { build, type TestApp } from '../helpers/build.js'
import { startSmtp } from '../helpers/smtp.js'

// 20 concurrent invites of one address (same workspace, no Idempotency-Key). Rotating the token
// and sending the e-mail of one invitation are ordered by a send lease on the invitation row, so
// the e-mail that arrives last always carries the one link that works; every earlier link is dead.

const N = 20

async function preview (h: TestApp, link: string): Promise<number> {
  const token = new URL(link).searchParams.get('token') ?? ''
  return (await h.inject({ method: 'POST', url: '/api/auth/invitation', payload: { token } })).statusCode
}

t.test('20 concurrent invites of one address: one pending invitation, the last e-mail carries the working link', async t => {
  const smtp = await startSmtp(t)
  // The server keeps the first message it receives back until the others have arrived (≤ 2 s),
  // as a slow delivery overtaken by later ones.
  smtp.holdFirst = { others: N - 1, ms: 2000 }
  const h = await build(
    t, { env: { SMTP_URL: smtp.url, SMTP_TIMEOUT_MS: '20000', INVITE_EMAILS_PER_HOUR: String(N * 2) } }
  )
  const admin = await h.signIn()
  const email = 'same-person@example.com'

  const answers = await Promise.all(Array.from({ length: N }, async () => await h.inject({
    method: 'POST', url: '/api/users/invite', headers: { cookie: admin.cookie }, payload: { email, role: 'member' }
  })))
  const statuses = answers.map(r => r.statusCode)
  t.same(statuses, statuses.map(() => 200), 'every request answered 200')

  const pending = await h.db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM invitations WHERE email = $1 AND status = 'pending'", [email]
  )
  t.equal(pending.rows[0]?.n, 1, 'exactly one pending invitation')

  const mails = smtp.messages.filter(m => m.to.includes(email))
  const links = mails.map(m => /https?:\/\/\S+\/signup\?token=[^\s"<]+/.exec(m.text)?.[0] ?? '')
  t.equal(mails.length, N, `${mails.length} e-mails received for ${N} answered 200 (each a real send)`)
  const works = await Promise.all(links.map(async l => await preview(h, l) === 200))
  t.same(
    works.map((w, i) => w ? i : -1).filter(i => i >= 0), [links.length - 1],
    'only the link in the e-mail received last works'
  )
  const answered = answers.map(r => r.json<{ invitationUrl?: string }>().invitationUrl)
  t.ok(answered.includes(links.at(-1)), 'and one answer carried that link')
})
