import t from 'tap'
import { randomBytes, X509Certificate } from 'node:crypto'
import { build, type SignedIn } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { jobsSettled } from '../helpers/jobs.js'
import { startSmtp } from '../helpers/smtp.js'
import { makeKeyPair } from '../helpers/saml-idp.js'
import { until } from '../helpers/service-process.js'

/** A date as the e-mail writes it: the long form, in the workspace's time zone (UTC by default). */
const longDate = (d: Date): string => new Intl.DateTimeFormat('en', { dateStyle: 'long', timeZone: 'UTC' }).format(d)

// A SAML connection's signing certificate near its end (issue 53, item 1): the hourly sweep tells
// each workspace admin by e-mail and records sso_connection.certificate_expiring (the event
// sso.certificate_expiring) when the LAST pinned certificate to expire is within 30 days, again
// within 7, and once expired — each stage once, however often or on however many instances the
// sweep runs; a newer certificate pinned beside it (a rotation under way) silences it. The sweep is
// the job engine's own job definition, run on the service's clock; the e-mails go through the
// real mailer to a loopback SMTP peer.

const DAY = 86_400_000
const smtp = await startSmtp(t)
const h = await build(t, { env: { SMTP_URL: smtp.url, JOBS_POLL_MS: '500', PUBLIC_URL: 'http://localhost:3000' } })
const ada = await h.signIn({ role: 'admin', email: 'ada@example.com' })
await h.signIn({ role: 'admin', workspaceId: ada.workspaceId, email: 'bea@example.com' })
await h.signIn({ role: 'member', workspaceId: ada.workspaceId, email: 'mo@example.com' })

const sweep = h.app.services.jobs.find(j => j.queue === 'sso-certificates')
if (sweep === undefined) throw new Error('no sso-certificates job')
/** One run of the hourly sweep, then its e-mails sent. */
const runSweep = async (): Promise<void> => {
  await sweep.run({})
  await jobsSettled(h, ['sso-certificate-notice'])
}

// Expires in two days (openssl, at test start); the one it rotates to in ten years.
const expiring = (await makeKeyPair(t, 'expiring-idp')).certificate
const notAfter = new Date(new X509Certificate(expiring).validTo)
const fingerprint = new X509Certificate(expiring).fingerprint256
const LONG = (await makeKeyPair(t, 'rotated-idp', 3650)).certificate

async function verifiedDomain (workspaceId: string, name: string): Promise<void> {
  await h.db.query(
    `INSERT INTO workspace_domains (workspace_id, domain, status, token, verified_at, created_at, updated_at)
     VALUES ($1, $2, 'verified', $3, now(), now(), now())`, [workspaceId, name, randomBytes(32).toString('hex')])
}

async function samlConnection (admin: SignedIn, name: string, domain: string, certificates: string[]): Promise<string> {
  await verifiedDomain(admin.workspaceId, domain)
  const res = await h.inject({
    method: 'POST',
    url: '/api/sso/connections',
    headers: { cookie: admin.cookie },
    payload: {
      name,
      protocol: 'saml',
      domains: [domain],
      saml: {
        idpMetadataXml: '<EntityDescriptor/>',
        idpEntityId: `https://${domain}/idp`,
        idpSsoUrl: `https://${domain}/sso`,
        idpCertificates: certificates
      }
    }
  })
  if (res.statusCode !== 201) throw new Error(`the connection was not made: ${res.body}`)
  return res.json().id
}

const mailTo = (who: string) => smtp.messages.filter(m => m.to.includes(who) && /SAML signing certificate/.test(m.subject))
const at = (daysBefore: number): void => { h.clock.set(new Date(notAfter.getTime() - daysBefore * DAY)) }

const okta = await samlConnection(ada, 'Okta <prod>', 'acme-robotics.com', [expiring])

t.test('30 days, 7 days, expired: each admin told by e-mail once per stage, with the event', async t => {
  at(45)
  await runSweep()
  t.equal(mailTo('ada@example.com').length, 0, '45 days before: nothing')

  at(20)
  await runSweep()
  await runSweep()
  const first = await until('the 30-day notice', async () => mailTo('ada@example.com')[0])
  t.equal(first.subject, 'Acme: the SAML signing certificate of Okta <prod> expires in 20 days')
  t.match(first.text, fingerprint)
  t.match(first.text, `expires on ${longDate(notAfter)}`)
  t.match(first.text, 'http://localhost:3000/console/sso')
  t.match(first.html, 'Okta &lt;prod&gt;', 'the connection\'s name is escaped in the HTML part')
  t.equal(mailTo('bea@example.com').length, 1, 'every active admin')
  t.equal(mailTo('mo@example.com').length, 0, 'not members')
  t.equal(mailTo('ada@example.com').length, 1, 'once, though the sweep ran twice')

  const feed = await h.inject({ url: '/api/events?types=sso.certificate_expiring', headers: { cookie: ada.cookie } })
  assertContract(t, 'GET', '/api/events', feed)
  t.match(feed.json().items, [{
    type: 'sso.certificate_expiring',
    actor: { type: 'system', id: null },
    data: { ssoConnectionId: okta, name: 'Okta <prod>', fingerprintSha256: fingerprint, expiresAt: notAfter.toISOString() }
  }])
  const audit = await h.inject({
    url: '/api/audit-events?action=sso_connection.certificate_expiring', headers: { cookie: ada.cookie }
  })
  assertContract(t, 'GET', '/api/audit-events', audit)
  t.equal(audit.json().items.length, 1)

  at(3)
  await runSweep()
  await until('the 7-day notice', async () => mailTo('bea@example.com')[1])
  t.equal(mailTo('ada@example.com')[1]?.subject, 'Acme: the SAML signing certificate of Okta <prod> expires in 3 days')

  at(-1)
  await runSweep()
  await runSweep()
  await until('the expired notice', async () => mailTo('ada@example.com')[2])
  t.equal(mailTo('ada@example.com')[2]?.subject, 'Acme: the SAML signing certificate of Okta <prod> has expired')
  t.match(mailTo('ada@example.com')[2]?.text, `expired on ${longDate(notAfter)}`)
  t.equal(mailTo('ada@example.com').length, 3, 'three stages, three e-mails')
  const events = await h.inject({ url: '/api/events?types=sso.certificate_expiring', headers: { cookie: ada.cookie } })
  t.equal(events.json().items.length, 3, 'an event per stage')
  const payloads = await h.db.query<{ days: number }>(
    `SELECT (payload->>'daysLeft')::int AS days FROM audit_events
      WHERE action = 'sso_connection.certificate_expiring' AND target_id = $1 ORDER BY days`, [okta])
  t.same(payloads.rows.map(r => r.days), [-1, 3, 20], 'the trail says how many days were left')
})

t.test('a newer certificate pinned beside it is a rotation under way: nothing to tell', async t => {
  const admin = await h.signIn({ role: 'admin', workspaceName: 'Rotating', email: 'ro@example.com' })
  await samlConnection(admin, 'Entra', 'rotating.example', [expiring, LONG])
  at(3)
  await runSweep()
  t.equal(mailTo('ro@example.com').length, 0)
  const audit = await h.inject({
    url: '/api/audit-events?action=sso_connection.certificate_expiring', headers: { cookie: admin.cookie }
  })
  t.equal(audit.json().items.length, 0)
})

t.test('sweeps at once on two instances tell once', async t => {
  const admin = await h.signIn({ role: 'admin', workspaceName: 'Twice', email: 'tw@example.com' })
  await samlConnection(admin, 'Google', 'twice.example', [expiring])
  at(10)
  await Promise.all([sweep.run({}), sweep.run({}), sweep.run({})])
  await jobsSettled(h, ['sso-certificate-notice'])
  await until('the notice', async () => mailTo('tw@example.com')[0])
  t.equal(mailTo('tw@example.com').length, 1)
})

t.test('an e-mail whose certificate was replaced before it went is not sent', async t => {
  const admin = await h.signIn({ role: 'admin', workspaceName: 'Quick', email: 'qu@example.com' })
  const id = await samlConnection(admin, 'Okta', 'quick.example', [expiring])
  // The sweep queued this admin's e-mail; the admin rotated before the job ran.
  const job = { workspaceId: admin.workspaceId, connectionId: id, fingerprint, userId: admin.userId }
  const patched = await h.inject({
    method: 'PATCH',
    url: `/api/sso/connections/${id}`,
    headers: { cookie: admin.cookie },
    payload: { saml: { idpCertificates: [expiring, LONG] } }
  })
  t.equal(patched.statusCode, 200)
  const send = h.app.services.jobs.find(j => j.queue === 'sso-certificate-notice')
  await send?.run(job)
  t.equal(mailTo('qu@example.com').length, 0, 'a newer certificate is pinned: nothing to tell')
  await send?.run({ ...job, userId: ada.userId })
  t.equal(mailTo('ada@example.com').length, 3, 'nor to an admin of another workspace')

  const other = await samlConnection(admin, 'Okta 2', 'quick2.example', [expiring])
  await send?.run({ ...job, connectionId: other })
  await until('the e-mail of a notice that still applies', async () => mailTo('qu@example.com')[0])
})
