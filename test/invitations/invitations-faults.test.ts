import t from 'tap'
import { build, type TestApp } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { closedPort, startBlackhole, startSmtp } from '../helpers/smtp.js'
import { invite } from '../helpers/invite.js'

// Sending faults on the fallback path: connection refused, 5xx at RCPT and a server that never
// speaks each answer 500 EMAIL_SEND_FAILED within the bounded time, record the failure on the
// kept invitation, and the same request later re-sends that same invitation with a working link.

const URL_ = '/api/users/invite'
// One secret for both app instances of a case, so the admin's cookie works on the second.
const SESSION_SECRET = 'x'.repeat(40)

function tokenOf (url: string): string {
  return new URL(url).searchParams.get('token') ?? ''
}

async function invitationRows (h: TestApp, email: string) {
  const r = await h.db.query<{
    id: string,
    status: string,
    delivery_status: string,
    delivery_error: string | null,
    delivery_attempts: number
  }>(
    'SELECT id, status, delivery_status, delivery_error, delivery_attempts FROM invitations WHERE email = $1 ORDER BY created_at', [email])
  return r.rows
}

async function auditActions (h: TestApp, targetId: string): Promise<string[]> {
  const r = await h.db.query<{ action: string }>(
    'SELECT action FROM audit_events WHERE target_id = $1 ORDER BY id', [targetId]
  )
  return r.rows.map(x => x.action)
}

t.test('send faults: 500 EMAIL_SEND_FAILED within bounded time, row records it, retry works', async t => {
  const port = await closedPort()
  const blackhole = await startBlackhole(t)
  const smtp = await startSmtp(t)
  // The working app; a failing app for a case shares its database and clock.
  const good = await build(t, { env: { SMTP_URL: smtp.url, SESSION_SECRET } })
  const admin = await good.signIn()
  const failingApp = async (url: string) => await build(
    t, { db: good.db, clock: good.clock, env: { SMTP_URL: url, SMTP_TIMEOUT_MS: '1000', SESSION_SECRET } }
  )
  const cases: Array<{ name: string, app: () => Promise<TestApp>, after?: () => void }> = [
    { name: 'connection refused', app: async () => await failingApp(`smtp://127.0.0.1:${port}`) },
    {
      name: '5xx at RCPT',
      app: async () => { smtp.mode = 'reject-rcpt'; return good },
      after: () => { smtp.mode = 'accept' }
    },
    { name: 'blackhole (never speaks)', app: async () => await failingApp(blackhole.url) }
  ]
  for (const c of cases) {
    await t.test(c.name, async t => {
      const h = await c.app()
      const email = `fault-${c.name.toLowerCase().replace(/\W+/g, '-')}@example.com`
      const started = performance.now()
      const res = await invite(h, admin.cookie, { email })
      const elapsed = performance.now() - started
      c.after?.()
      t.equal(res.statusCode, 500)
      t.same(
        res.json(),
        { message: 'Sending the e-mail failed. The invitation is kept; retry the request.', code: 'EMAIL_SEND_FAILED' },
        'no internal text'
      )
      assertContract(t, 'POST', URL_, res)
      // SMTP_TIMEOUT_MS=1000 is the whole send's deadline; allow for a loaded machine.
      t.ok(elapsed < 4000, `answered in ${Math.round(elapsed)} ms (< 4 s)`)
      const [row] = await invitationRows(good, email)
      t.equal(row?.status, 'pending', 'the invitation is kept')
      t.equal(row?.delivery_status, 'failed', 'the failure is recorded on the row')
      t.ok((row?.delivery_error ?? '').length > 0, 'with the reason (internal, not in the answer)')
      t.same(await auditActions(good, row?.id ?? ''), ['invitation.created', 'invitation.email_failed'])

      // The retry, once mail works again: same request, same invitation, a working link.
      const seen = smtp.messages.length
      const retry = await invite(good, admin.cookie, { email })
      t.equal(retry.statusCode, 200, 'retry: 200, no 409')
      assertContract(t, 'POST', URL_, retry)
      const rows = await invitationRows(good, email)
      t.equal(rows.length, 1, 'no second invitation')
      t.equal(rows[0]?.id, row?.id, 'the same invitation')
      t.equal(rows[0]?.delivery_status, 'sent')
      const mail = await smtp.nextMessage(seen)
      t.ok(mail.text.includes(retry.json().invitationUrl), 'the e-mail carries the new link')
      const preview = await good.inject({
        method: 'POST',
        url: '/api/auth/invitation',
        payload: { token: tokenOf(retry.json().invitationUrl) }
      })
      t.equal(preview.statusCode, 200, 'the link works')
    })
  }
})
