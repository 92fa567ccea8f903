import t, { type Test } from 'tap'
import { build } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { invited } from '../helpers/invite.js'
import { jobsSettled } from '../helpers/jobs.js'
import { startSmtp, type CaughtMail } from '../helpers/smtp.js'
import { queueDueReminders } from '../../src/invitations/reminders.js'
import { requestNoticeEmail } from '../../src/invite-requests/notice-email.js'
import { certificateNoticeEmail } from '../../src/sso/certificate-email.js'
import { streamPausedEmail } from '../../src/audit-streams/paused-email.js'
import { PSEUDO_LOCALE } from '../../src/i18n/locales.js'
import type { InviteRequestRow } from '../../src/db/invite-requests.js'
import type { MailMessage } from '../../src/ports/mailer.js'

// E-mails in the reader's language (issue 54): an invitation made in Japanese stays Japanese when
// re-sent and reminded (a real SMTP peer on loopback); the workspace's default language and time
// zone for whoever has none; and, in the pseudo-locale, every word of every e-mail comes from the
// catalogue (anything outside ⟦ ⟧ but the values filled in is a word that escaped it).

const FAST = { JOBS_POLL_MS: '500', AUTH_RATE_LIMIT_PER_MINUTE: '1000' }
const json = (cookie: string) => ({ cookie, 'content-type': 'application/json' })
const JAPANESE = /[\u3040-\u30ff\u4e00-\u9fff]/

t.test('an invitation made in Japanese: the e-mail, its re-send and its reminder are all Japanese', async t => {
  const smtp = await startSmtp(t)
  const h = await build(t, { env: { ...FAST, SMTP_URL: smtp.url } })
  const admin = await h.signIn({ role: 'admin', workspaceName: 'Acme' })
  const { res, id } = await invited(h, admin, { email: 'hanako@example.com', role: 'member', locale: 'ja-JP' })
  const first = await smtp.nextMessage(0)
  t.equal(res.statusCode, 200)

  const listed = await h.inject({ method: 'GET', url: '/api/invitations', headers: { cookie: admin.cookie } })
  assertContract(t, 'GET', '/api/invitations', listed)
  t.equal(listed.json().items.find((i: { id: string }) => i.id === id)?.locale, 'ja-JP', 'the tag kept as given')

  const resent = await h.inject({ method: 'POST', url: `/api/invitations/${id}/resend`, headers: { cookie: admin.cookie } })
  t.equal(resent.statusCode, 200)
  const second = await smtp.nextMessage(1)

  h.clock.advance(5 * 86_400_000 + 60_000) // within the default 2 days before the 7-day expiry
  t.equal(await queueDueReminders(h.app.services.ports), 1)
  const third = await smtp.nextMessage(2)
  await jobsSettled(h, ['invitation-reminder'])

  for (const [what, mail] of [['invitation', first], ['re-send', second], ['reminder', third]] as const) {
    t.match(mail.subject, JAPANESE, `${what}: Japanese subject`)
    t.match(mail.text, /このリンクは一度だけ使用でき/, `${what}: Japanese text part`)
    t.match(mail.html, /<html lang="ja" dir="ltr">/, `${what}: <html lang="ja">`)
    t.match(mail.html, /招待を承諾する/, `${what}: Japanese button`)
    t.notMatch(mail.text, /invited you|expires on/, `${what}: no English`)
    t.match(mail.raw, /^From: "?Acme via Workspace"? <no-reply@localhost>/m, `${what}: the workspace's sender name`)
  }
  t.match(third.subject, /^【リマインダー】/, 'the reminder says so, in Japanese')
})

t.test('the workspace default language and time zone; an invitation without a locale follows them', async t => {
  const smtp = await startSmtp(t)
  const h = await build(t, { env: { ...FAST, SMTP_URL: smtp.url } })
  const admin = await h.signIn({ role: 'admin', workspaceName: 'Gesellschaft' })
  const settings = await h.inject({
    method: 'PATCH', url: '/api/workspace/settings', headers: json(admin.cookie), payload: { locale: 'de', timeZone: 'Europe/Berlin' }
  })
  t.equal(settings.statusCode, 200)
  assertContract(t, 'PATCH', '/api/workspace/settings', settings)
  t.match(settings.json(), { locale: 'de', timeZone: 'Europe/Berlin' })
  const audit = await h.db.query<{ payload: unknown }>(
    "SELECT payload FROM audit_events WHERE workspace_id = $1 AND action = 'workspace.settings_changed'", [admin.workspaceId])
  t.same(audit.rows.map(r => r.payload), [{ locale: { from: 'en', to: 'de' }, timeZone: { from: 'UTC', to: 'Europe/Berlin' } }])

  for (const [payload, field] of [
    [{ timeZone: 'Mars/Olympus_Mons' }, 'timeZone'], [{ locale: 'not a tag!' }, 'locale']
  ] as const) {
    const bad = await h.inject({ method: 'PATCH', url: '/api/workspace/settings', headers: json(admin.cookie), payload })
    t.equal(bad.statusCode, 400, `${field} refused`)
    t.equal(bad.json().code, 'VALIDATION_FAILED')
    t.match(bad.json().message, field)
    assertContract(t, 'PATCH', '/api/workspace/settings', bad)
  }
  const badInvite = await h.inject({
    method: 'POST', url: '/api/users/invite', headers: json(admin.cookie), payload: { email: 'a@example.com', role: 'member', locale: '日本語' }
  })
  t.equal(badInvite.statusCode, 400, 'an invitation locale that is not a language tag is refused')
  t.match(badInvite.json().message, /locale/)

  await invited(h, admin, { email: 'karl@example.com', role: 'member' })
  const mail = await smtp.nextMessage(0)
  t.match(mail.html, /<html lang="de" dir="ltr">/)
  t.match(mail.subject, /hat Sie zu Gesellschaft eingeladen/)
  // Made now (the fake clock), expiring in 7 days, written in Berlin's time.
  const expires = new Date(h.clock.now().getTime() + 7 * 86_400_000)
  const berlin = new Intl.DateTimeFormat('de', { timeZone: 'Europe/Berlin', hour: 'numeric', minute: 'numeric' }).format(expires)
  t.ok(mail.text.includes(`um ${berlin} MEZ ab`), `the expiry in Berlin's time (${berlin} MEZ)`)

  await invited(h, admin, { email: 'sarah@example.com', role: 'member', locale: 'ar' })
  const arabic = await smtp.nextMessage(1)
  t.match(arabic.html, /<html lang="ar" dir="rtl">/, 'Arabic is laid out right to left')
  t.match(arabic.subject, /للانضمام إلى Gesellschaft/)

  await invited(h, admin, { email: 'tlh@example.com', role: 'member', locale: 'tlh' })
  t.match((await smtp.nextMessage(2)).html, /<html lang="de"/, 'a language the service does not write: the workspace\'s')
})

/** The words of a part outside ⟦ ⟧ once the values filled in are taken out: none may be left. */
function escapedWords (part: string, values: string[]): string[] {
  let rest = part
    .replace(/<[^>]*>/g, ' ')
    .replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'")
    .replace(/⟦[^⟧]*⟧/g, ' ')
    .replace(/https?:\/\/\S+/g, ' ')
  for (const v of values) rest = rest.split(v).join(' ')
  return rest.match(/[A-Za-z]{2,}/g) ?? []
}

/** The texts people read in attributes: alt, aria-label, title. */
function attributeTexts (html: string): string {
  return [...html.matchAll(/\b(?:alt|aria-label)="([^"]*)"/g)].map(m => m[1]).join('\n') +
    [...html.matchAll(/<title>([^<]*)<\/title>/g)].map(m => m[1]).join('\n')
}

function checkPseudo (
  t: Test, what: string, mail: Pick<MailMessage, 'subject' | 'text' | 'html'> | CaughtMail, values: string[]
): void {
  t.same(escapedWords(mail.subject, values), [], `${what}: the subject is all catalogue`)
  t.same(escapedWords(mail.text, values), [], `${what}: the text part is all catalogue`)
  const body = mail.html.replace(/<head>[\s\S]*<\/head>/, '')
  t.same(escapedWords(body, values), [], `${what}: the HTML part is all catalogue`)
  t.same(escapedWords(attributeTexts(mail.html), values), [], `${what}: its alt and label texts too`)
}

t.test('pseudo-locale: no English word escapes the catalogue in any e-mail', async t => {
  const smtp = await startSmtp(t)
  const h = await build(t, { env: { ...FAST, SMTP_URL: smtp.url } })
  const admin = await h.signIn({ role: 'admin', workspaceName: 'Zq', email: 'zz@example.com' })
  t.equal((await h.inject({
    method: 'PATCH', url: '/api/workspace/settings', headers: json(admin.cookie), payload: { locale: PSEUDO_LOCALE }
  })).statusCode, 200)
  const values = ['Zq', 'zz@example.com', 'xx@example.com', 'Zq via Workspace']
  const { id } = await invited(h, admin, { email: 'xx@example.com', role: 'admin' })
  checkPseudo(t, 'invitation', await smtp.nextMessage(0), values)
  await h.inject({ method: 'POST', url: `/api/invitations/${id}/resend`, headers: { cookie: admin.cookie } })
  checkPseudo(t, 're-send', await smtp.nextMessage(1), values)
  h.clock.advance(5 * 86_400_000 + 60_000)
  await queueDueReminders(h.app.services.ports)
  checkPseudo(t, 'reminder', await smtp.nextMessage(2), values)
  await jobsSettled(h, ['invitation-reminder'])

  const link = await h.inject({
    method: 'POST', url: '/api/auth/login-link', headers: { 'content-type': 'application/json' }, payload: { email: 'zz@example.com' }
  })
  t.equal(link.statusCode, 202)
  checkPseudo(t, 'sign-in link', await smtp.nextMessage(3), values)

  const made = await h.inject({
    method: 'POST', url: '/api/invite-links', headers: json(admin.cookie), payload: { requiresApproval: true, locale: PSEUDO_LOCALE }
  })
  t.equal(made.statusCode, 201)
  assertContract(t, 'POST', '/api/invite-links', made)
  t.equal(made.json().locale, PSEUDO_LOCALE)
  const code = String(made.json().url).split('/join/')[1] ?? ''
  const join = await h.inject({
    method: 'POST', url: `/api/join/${code}`, headers: { 'content-type': 'application/json' }, payload: { email: 'yy@example.com' }
  })
  t.equal(join.statusCode, 202)
  checkPseudo(t, 'invite link confirmation', await smtp.nextMessage(4), [...values, 'yy@example.com'])

  // The admins' notices, from their builders with the same reader an admin of this workspace gets.
  const { readerFor } = await import('../../src/emails/reader.js')
  const reader = await readerFor(h.db, h.config, admin.workspaceId, null)
  const requests = [{ email: 'ww@example.com', role: 'member' }, { email: 'vv@example.com', role: 'admin' }] as InviteRequestRow[]
  for (const n of [1, 2]) {
    checkPseudo(t, `request notice of ${n}`, requestNoticeEmail(reader, {
      to: 'zz@example.com', requests: requests.slice(0, n), consoleUrl: 'https://app.example.test/console/requests'
    }), [...values, 'ww@example.com', 'vv@example.com'])
  }
  for (const daysLeft of [7, 0]) {
    checkPseudo(t, `certificate notice, ${daysLeft} days left`, certificateNoticeEmail(reader, {
      to: 'zz@example.com',
      connectionName: 'Qz',
      fingerprintSha256: '00:11:22',
      expiresAt: new Date('2026-12-14T17:00:00Z'),
      daysLeft,
      consoleUrl: 'https://app.example.test/console/sso'
    }), [...values, 'Qz'])
  }
  for (const lastProblem of ['HTTP 503', null]) {
    checkPseudo(t, `audit stream paused, last answer ${String(lastProblem)}`, streamPausedEmail(reader, {
      to: 'zz@example.com',
      streamName: 'Qz',
      host: 'siem.example.test',
      failingSince: new Date('2026-12-14T17:00:00Z'),
      lastProblem,
      consoleUrl: 'https://app.example.test/console/activity'
    }), [...values, 'Qz', 'siem.example.test', 'HTTP 503'])
  }
})

t.test('a member chooses their language on their profile: their sign-in link and an admin\'s notices follow it', async t => {
  const smtp = await startSmtp(t)
  const h = await build(t, { env: { ...FAST, SMTP_URL: smtp.url } })
  const admin = await h.signIn({ role: 'admin', workspaceName: 'Société', email: 'chef@example.com' })
  const patch = async (payload: unknown, headers: Record<string, string> = json(admin.cookie)) =>
    await h.inject({ method: 'PATCH', url: '/api/users/me', headers, payload: payload as Record<string, unknown> })

  const set = await patch({ locale: 'fr-CA' })
  t.equal(set.statusCode, 200)
  assertContract(t, 'PATCH', '/api/users/me', set)
  t.equal(set.json().locale, 'fr-CA')
  const me = await h.inject({ method: 'GET', url: '/api/users/me', headers: { cookie: admin.cookie } })
  assertContract(t, 'GET', '/api/users/me', me)
  t.equal(me.json().locale, 'fr-CA', 'kept')

  const bad = await patch({ locale: 'français !' })
  t.equal(bad.statusCode, 400)
  t.equal(bad.json().code, 'VALIDATION_FAILED')
  t.match(bad.json().message, /locale/)
  assertContract(t, 'PATCH', '/api/users/me', bad)
  const anonymous = await patch({ locale: 'de' }, { 'content-type': 'application/json' })
  t.equal(anonymous.statusCode, 401)
  assertContract(t, 'PATCH', '/api/users/me', anonymous)
  const key = await patch({ locale: 'de' }, { 'content-type': 'application/json', authorization: 'Bearer wsk_0rv3kzc787hn_x' })
  t.equal(key.statusCode, 403)
  t.equal(key.json().code, 'API_KEY_NOT_ALLOWED')
  assertContract(t, 'PATCH', '/api/users/me', key)

  const link = await h.inject({
    method: 'POST', url: '/api/auth/login-link', headers: { 'content-type': 'application/json' }, payload: { email: 'chef@example.com' }
  })
  t.equal(link.statusCode, 202)
  const mail = await smtp.nextMessage(0)
  t.match(mail.html, /<html lang="fr" dir="ltr">/, 'the sign-in link in their language')
  t.equal(mail.subject, 'Votre lien de connexion')

  const reset = await patch({ locale: null })
  t.equal(reset.statusCode, 200)
  t.equal(reset.json().locale, null, 'null: back to the workspace\'s')
  await h.inject({
    method: 'POST', url: '/api/auth/login-link', headers: { 'content-type': 'application/json' }, payload: { email: 'chef@example.com' }
  })
  t.equal((await smtp.nextMessage(1)).subject, 'Your sign-in link')
})

t.test('a batch: each row\'s locale, else the batch\'s, else none (the workspace\'s); its e-mails follow', async t => {
  const smtp = await startSmtp(t)
  const h = await build(t, { env: { ...FAST, SMTP_URL: smtp.url } })
  const admin = await h.signIn({ role: 'admin', workspaceName: 'Lote' })
  const rows = [{ email: 'uno@example.com', locale: 'es' }, { email: 'deux@example.com' }]
  const res = await h.inject({
    method: 'POST', url: '/api/invitations/batch', headers: json(admin.cookie), payload: { locale: 'fr', rows }
  })
  t.equal(res.statusCode, 201)
  assertContract(t, 'POST', '/api/invitations/batch', res)
  const stored = await h.db.query<{ email: string, locale: string | null }>(
    'SELECT email, locale FROM invitations WHERE workspace_id = $1 ORDER BY email', [admin.workspaceId])
  t.same(stored.rows, [{ email: 'deux@example.com', locale: 'fr' }, { email: 'uno@example.com', locale: 'es' }])
  await jobsSettled(h, ['invitation-batch'])
  const mails = [await smtp.nextMessage(0), await smtp.nextMessage(1)]
  const to = (who: string) => mails.find(m => m.to.includes(who))
  t.match(to('uno@example.com')?.html, /<html lang="es"/, 'the row\'s language')
  t.match(to('deux@example.com')?.html, /<html lang="fr"/, 'the batch\'s language')
})
