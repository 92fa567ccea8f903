import t from 'tap'
import { build, principalOf } from '../helpers/build.js'
import { idempotencyKey, invite } from '../helpers/invite.js'
import { startSmtp, startSmtpFront } from '../helpers/smtp.js'
import { until } from '../helpers/service-process.js'

// Idempotency-Key as a module (src/idempotency): the stored answer is sealed (a replay is the
// first answer, the database holds no live link), and a claim is a lease its owner renews, so
// two live requests with one key never both send — even when the first works past the lease.

const LEASE_MS = 1000

t.test('the stored answer is sealed; a replay is exactly the first answer', async t => {
  const smtp = await startSmtp(t)
  const h = await build(t, { env: { SMTP_URL: smtp.url } })
  const admin = await h.signIn()
  const first = await invite(h, admin.cookie, { email: 'sealed@example.com' }, idempotencyKey('k-sealed'))
  t.equal(first.statusCode, 200)
  const link: string = first.json().invitationUrl
  const token = new URL(link).searchParams.get('token') ?? ''
  t.ok(token.length > 20, 'the answer carries a live signup link')
  const row = await h.db.query<{ dump: string }>(
    "SELECT row_to_json(k)::text AS dump FROM idempotency_keys k WHERE key = 'k-sealed'"
  )
  t.equal(row.rows.length, 1)
  t.notOk(row.rows[0]?.dump.includes(token), 'the stored row does not hold the token')
  t.notOk(row.rows[0]?.dump.includes('sealed@example.com'), 'nor anything else of the answer in clear')
  const replay = await invite(h, admin.cookie, { email: 'sealed@example.com' }, idempotencyKey('k-sealed'))
  t.equal(replay.statusCode, 200)
  t.same(replay.json(), first.json(), 'the replay is the first answer')
  t.equal(smtp.messages.length, 1, 'one e-mail')
  const preview = await h.inject({ method: 'POST', url: '/api/auth/invitation', payload: { token } })
  t.equal(preview.statusCode, 200, 'and the replayed link is the one that works')

  // A sealed answer copied to another key does not open (bound to its key).
  await invite(h, admin.cookie, { email: 'other@example.com' }, idempotencyKey('k-other'))
  await h.db.query(
    "UPDATE idempotency_keys SET response = (SELECT response FROM idempotency_keys WHERE key = 'k-sealed') WHERE key = 'k-other'"
  )
  t.equal(
    (await invite(h, admin.cookie, { email: 'other@example.com' }, idempotencyKey('k-other'))).statusCode, 500,
    'a moved answer is refused, not replayed'
  )
})

t.test('two live requests with one key: one sends, the other gets 409, even past the lease', async t => {
  const smtp = await startSmtp(t)
  const front = await startSmtpFront(t, smtp)
  const h = await build(
    t, { env: { SMTP_URL: front.url, SMTP_TIMEOUT_MS: '10000', IDEMPOTENCY_LEASE_MS: String(LEASE_MS) } }
  )
  const admin = await h.signIn()
  const email = 'live@example.com'
  const lockedUntil = async () => (await h.db.query<{ locked_until: Date | null }>(
    "SELECT locked_until FROM idempotency_keys WHERE key = 'k-live'"
  )).rows[0]?.locked_until ?? undefined

  front.silent() // the first request's send hangs until the server comes back
  const firstP = invite(h, admin.cookie, { email }, idempotencyKey('k-live'))
  const claimed = await until('the first request\'s claim', lockedUntil)
  // Its lease has run out by the clock — unless its owner renews it, which it does while it works.
  h.clock.advance(LEASE_MS * 5)
  await until(
    'a renewal of the lease',
    async () => {
      const u = await lockedUntil()
      return u !== undefined && u.getTime() > h.clock.now().getTime() ? u : undefined
    }
  )
  t.ok(((await lockedUntil())?.getTime() ?? 0) > claimed.getTime(), 'the owner renewed its lease')

  const second = await invite(h, admin.cookie, { email }, idempotencyKey('k-live'))
  t.equal(second.statusCode, 409, 'the second live request does not run')
  t.equal(second.json().code, 'IDEMPOTENCY_KEY_IN_USE')

  await front.up()
  const first = await firstP
  t.equal(first.statusCode, 200, 'the first completes once the server is back')
  await front.idle()
  t.equal(smtp.messages.filter(m => m.to.includes(email)).length, 1, 'exactly one e-mail')
  const third = await invite(h, admin.cookie, { email }, idempotencyKey('k-live'))
  t.same(third.json(), first.json(), 'and a later retry replays it')

  // Fired together: one runs; the other is refused or replays, never a second send.
  const both = await Promise.all([
    invite(h, admin.cookie, { email: 'pair@example.com' }, idempotencyKey('k-pair')),
    invite(h, admin.cookie, { email: 'pair@example.com' }, idempotencyKey('k-pair'))
  ])
  const codes = both.map(r => r.statusCode).sort()
  t.ok(codes[0] === 200 && (codes[1] === 200 || codes[1] === 409), `answers ${codes.join(', ')}`)
  await front.idle()
  t.equal(smtp.messages.filter(m => m.to.includes('pair@example.com')).length, 1, 'one e-mail for the pair')
})

t.test('a key is the principal\'s own: another admin, or an API key, runs its own request', async t => {
  const smtp = await startSmtp(t)
  const h = await build(t, { env: { SMTP_URL: smtp.url } })
  const first = await h.signIn({ role: 'admin', email: 'first@example.com' })
  const second = await h.signIn({ role: 'admin', workspaceId: first.workspaceId, email: 'second@example.com' })
  const email = 'shared@example.com'

  const a = await invite(h, first.cookie, { email }, idempotencyKey('k-shared'))
  t.equal(a.statusCode, 200)
  const b = await invite(h, second.cookie, { email }, idempotencyKey('k-shared'))
  t.equal(b.statusCode, 200, 'the other admin\'s request ran')
  t.not(b.json().invitationUrl, a.json().invitationUrl, 'and never received the first admin\'s stored answer (its link)')
  t.equal(smtp.messages.filter(m => m.to.includes(email)).length, 2, 'its own request: the invitation was sent again')
  t.equal((await invite(h, first.cookie, { email: 'mine@example.com' }, idempotencyKey('k-mine'))).statusCode, 200)
  const other = await invite(h, second.cookie, { email: 'else@example.com' }, idempotencyKey('k-mine'))
  t.equal(other.statusCode, 200, 'another body under the first admin\'s key is no reuse: the key is not the other admin\'s')
  const replayA = await invite(h, first.cookie, { email }, idempotencyKey('k-shared'))
  t.same(replayA.json(), a.json(), 'the first admin still replays their own')
  const replayB = await invite(h, second.cookie, { email }, idempotencyKey('k-shared'))
  t.same(replayB.json(), b.json(), 'and the second theirs')

  // An API key is a principal of its own, apart from the admin who made it.
  const services = h.app.services.invitations
  const keyed = { key: 'k-shared', operation: 'postUsersInvite' }
  const admin = principalOf(first, 'admin')
  const viaKey = { ...principalOf(first, 'admin', 'apiKey'), apiKeyId: '11111111-1111-4111-8111-111111111111' }
  const otherKey = { ...viaKey, apiKeyId: '22222222-2222-4222-8222-222222222222' }
  const k1 = await services.invite(viaKey, { email, role: 'member' }, { idempotency: keyed })
  t.not(k1.invitationUrl, a.json().invitationUrl, 'the key runs its own request, not the admin\'s answer')
  const k2 = await services.invite(otherKey, { email, role: 'member' }, { idempotency: keyed })
  t.not(k2.invitationUrl, k1.invitationUrl, 'and another key its own')
  t.same(await services.invite(viaKey, { email, role: 'member' }, { idempotency: keyed }), k1, 'each key replays its own')
  t.same(await services.invite(admin, { email, role: 'member' }, { idempotency: keyed }), a.json(),
    'and the admin\'s session still gets theirs')
})
