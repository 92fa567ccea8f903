import t from 'tap'
import { build } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { invite } from '../helpers/invite.js'
import { startSmtp, startSmtpFront } from '../helpers/smtp.js'

// A message we answered 500 for must never leave. The SMTP server goes silent (accepts TCP,
// never speaks) or refuses connections, then comes back — the silent server's held
// connections are handed to it, as a frozen server that thaws would answer them. The client
// sees 500 EMAIL_SEND_FAILED within the bound, the row says failed, nothing arrives later for
// that request, the retry delivers exactly one e-mail, and the failed send did not spend the
// workspace's e-mail budget (a budget of 1 still lets the retry through).

const URL_ = '/api/users/invite'
const TIMEOUT_MS = 8000

t.test('SMTP silent or refusing, then back: the 500 is final, nothing leaves later, the retry sends one', async t => {
  const smtp = await startSmtp(t)
  const front = await startSmtpFront(t, smtp)
  const h = await build(
    t, { env: { SMTP_URL: front.url, SMTP_TIMEOUT_MS: String(TIMEOUT_MS), INVITE_EMAILS_PER_HOUR: '1' } }
  )
  const cases: Array<{ name: string, fail: () => Promise<void> }> = [
    { name: 'silent', fail: async () => { front.silent() } },
    { name: 'refusing', fail: async () => { await front.refusing() } }
  ]
  const relay = async () => {
    const res = await h.inject({ method: 'GET', url: '/api/health' })
    t.equal(res.statusCode, 200, 'a relay down is not the service down: health stays 200')
    assertContract(t, 'GET', '/api/health', res)
    return res.json().checks.mail.status as string
  }
  t.equal(await relay(), 'unknown', 'health: the relay unknown before any send')
  for (const c of cases) {
    await t.test(c.name, async t => {
      // More concurrent sends than nodemailer's pool had connections (5), so some wait in a queue.
      const admins = await Promise.all(Array.from({ length: 8 }, async () => await h.signIn())) // a budget of 1 each
      const emails = admins.map((_a, i) => `smtp-${c.name}-${i}@example.com`)
      const arrived = (email: string) => smtp.messages.filter(m => m.to.includes(email)).length

      await c.fail()
      const started = performance.now()
      const answers = await Promise.all(admins.map(async (a, i) => await invite(h, a.cookie, { email: emails[i] })))
      const elapsed = performance.now() - started
      t.same(answers.map(r => r.statusCode), emails.map(() => 500), 'every request: 500')
      t.same(answers.map(r => r.json().code), emails.map(() => 'EMAIL_SEND_FAILED'))
      assertContract(t, 'POST', URL_, answers[0] as Awaited<ReturnType<typeof invite>>)
      t.ok(
        elapsed < TIMEOUT_MS * 3,
        `all answered in ${Math.round(elapsed)} ms (deadline ${TIMEOUT_MS} ms; generous bound ${TIMEOUT_MS * 3})`
      )
      const rows = await h.db.query<{ delivery_status: string }>(
        'SELECT delivery_status FROM invitations WHERE email = ANY($1)', [emails]
      )
      t.same(rows.rows.map(r => r.delivery_status), emails.map(() => 'failed'), 'every row says failed')
      t.equal(await relay(), 'unavailable', 'health: the relay unavailable, as the failed sends saw it')

      // The server comes back; every connection the failed sends opened has ended before we look.
      await front.up()
      await front.idle()
      t.same(emails.map(arrived), emails.map(() => 0), 'nothing arrived for the requests we answered 500')

      const retries = await Promise.all(admins.map(async (a, i) => await invite(h, a.cookie, { email: emails[i] })))
      t.same(
        retries.map(r => r.statusCode), emails.map(() => 200),
        'every retry works: the failed send did not spend the budget of 1'
      )
      await front.idle()
      t.same(emails.map(arrived), emails.map(() => 1), 'exactly one e-mail each')
      t.equal(await relay(), 'ok', 'health: the relay ok again, as the retries saw it')
      const mail = smtp.messages.find(m => m.to.includes(emails[0] as string))
      t.ok(mail?.text.includes(retries[0]?.json().invitationUrl), 'carrying the retry\'s link')
      t.equal(
        (await invite(h, admins[0]?.cookie ?? '', { email: `smtp-${c.name}-next@example.com` })).statusCode, 429,
        'and the budget of 1 is now spent'
      )
    })
  }
})

t.test('the SMTP pool carries message after message on one connection, and lets go once idle', async t => {
  const smtp = await startSmtp(t)
  const front = await startSmtpFront(t, smtp)
  const h = await build(t, { env: { SMTP_URL: front.url, SMTP_TIMEOUT_MS: '60000' } })
  const admin = await h.signIn()
  for (let i = 0; i < 4; i++) {
    const res = await invite(h, admin.cookie, { email: `pool-${i}@example.com` })
    t.equal(res.statusCode, 200, `invitation ${i} sent`)
  }
  t.same(front.connections(), { accepted: 1, open: 1 }, 'four e-mails, one after another: one connection')
  // The socket timeout is a minute; the pool closes its connections two seconds after the last send.
  const started = performance.now()
  await front.idle(10_000)
  t.ok(performance.now() - started < 10_000, 'the idle pool closed its connection')
  const after = await invite(h, admin.cookie, { email: 'pool-after@example.com' })
  t.equal(after.statusCode, 200, 'and the next send opens a new one')
  t.equal(front.connections().accepted, 2)
  t.equal(smtp.messages.length, 5, 'every e-mail arrived')
})
