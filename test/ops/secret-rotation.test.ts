import t from 'tap'
import { randomBytes } from 'node:crypto'
import { connect } from 'node:net'
import { build, testConfig, testDatabase, type SignedIn, type TestApp } from '../helpers/build.js'
import { startSmtp, type SmtpPeer } from '../helpers/smtp.js'
import { startFakeHttp } from '../helpers/fake-http.js'
import { install, slackEnv, startSlackFake, TEAM_ID, type SlackFake } from '../helpers/slack.js'
import type { Database } from '../../src/db/client.js'
import { openToken } from '../../src/invitations/link-seal.js'
import { signingSecrets, webhookKeyring } from '../../src/webhooks/secrets.js'
import { findWebhookEndpoint } from '../../src/db/webhook-endpoints.js'
import { openWith } from '../../src/lib/crypto.js'
import { encryptionKeyring } from '../../src/lib/secret-keys.js'
import { botTokenContext } from '../../src/slack/install.js'
import { reencryptStored } from '../../src/housekeeping/reencrypt.js'
import { SESSION_COOKIE } from '../../src/sessions/service.js'

// SESSION_SECRET and ENCRYPTION_KEY rotate (docs/operating.md, "Rotating secrets"). The cases are
// every place a key is made from a secret (grep deriveKey, encryptionKey, session.secret in src/):
// the session JWT, stored Idempotency-Key answers, bounce return paths (VERP), reminder links
// (the sealed token), webhook signing secrets and Slack bot tokens. Each scenario makes them all
// under its `before` secrets, then rotates: while the old secret is listed as previous, all keep
// working and whatever is made then is made with the new one; after it is dropped, only what the
// re-encryption (npm run secrets:reencrypt) cannot rewrite stops — sessions in browsers and return
// paths in e-mails already sent — and, before the re-encryption ran, what is stored stops too.

t.setTimeout(240_000)

const secret = (): string => randomBytes(32).toString('base64url')
const key = (): string => randomBytes(32).toString('hex')

type Env = Record<string, string>
/** What seals an artefact: SESSION_SECRET, ENCRYPTION_KEY or else SESSION_SECRET, ENCRYPTION_KEY only. */
type Source = 'session' | 'at rest' | 'encryption key'

interface Artefact {
  name: string
  source: Source
  /** Kept in the database, so re-encrypted; else held outside (a browser, a sent e-mail). */
  stored: boolean
  works(h: TestApp): Promise<boolean>
}

interface Scenario {
  name: string
  before: Env
  during: Env
  after: Env
}

const S1 = secret()
const S2 = secret()
const K1 = key()
const K2 = key()

const scenarios: Scenario[] = [
  {
    name: 'SESSION_SECRET rotates, no ENCRYPTION_KEY',
    before: { SESSION_SECRET: S1 },
    during: { SESSION_SECRET: S2, SESSION_SECRET_PREVIOUS: S1 },
    after: { SESSION_SECRET: S2 }
  },
  {
    name: 'SESSION_SECRET rotates, with ENCRYPTION_KEY',
    before: { SESSION_SECRET: S1, ENCRYPTION_KEY: K1 },
    during: { SESSION_SECRET: S2, SESSION_SECRET_PREVIOUS: S1, ENCRYPTION_KEY: K1 },
    after: { SESSION_SECRET: S2, ENCRYPTION_KEY: K1 }
  },
  {
    name: 'ENCRYPTION_KEY rotates',
    before: { SESSION_SECRET: S1, ENCRYPTION_KEY: K1 },
    during: { SESSION_SECRET: S1, ENCRYPTION_KEY: K2, ENCRYPTION_KEY_PREVIOUS: K1 },
    after: { SESSION_SECRET: S1, ENCRYPTION_KEY: K2 }
  },
  {
    // The derived key stays readable beside ENCRYPTION_KEY; "dropped" here is SESSION_SECRET
    // replaced outright afterwards (no previous): the secrets at rest, re-encrypted under
    // ENCRYPTION_KEY, no longer depend on it; what SESSION_SECRET itself makes stops.
    name: 'a first ENCRYPTION_KEY where there was none',
    before: { SESSION_SECRET: S1 },
    during: { SESSION_SECRET: S1, ENCRYPTION_KEY: K1 },
    after: { SESSION_SECRET: S2, ENCRYPTION_KEY: K1 }
  }
]

/** The key an artefact of this source is sealed with under `env` (a name is enough to compare). */
function keyOf (source: Source, env: Env): string {
  if (source === 'session') return `s:${env.SESSION_SECRET ?? ''}`
  if (source === 'encryption key') return `k:${env.ENCRYPTION_KEY ?? ''}`
  return env.ENCRYPTION_KEY !== undefined ? `k:${env.ENCRYPTION_KEY}` : `s:${env.SESSION_SECRET ?? ''}`
}

/** RCPT TO at the bounce listener: does it take this return path as one of ours (250, not 550)? */
async function listenerTakes (url: string, address: string): Promise<boolean> {
  const { hostname, port } = new URL(url)
  const socket = connect(Number(port), hostname)
  socket.setEncoding('utf8')
  const lines: string[] = []
  let buffered = ''
  let waiting: (() => void) | null = null
  socket.on('data', (chunk: string) => {
    buffered += chunk
    const parts = buffered.split('\r\n')
    buffered = parts.pop() ?? ''
    // The last line of a reply is "NNN text" (continuations are "NNN-text").
    for (const l of parts) if (/^\d{3} /.test(l)) lines.push(l)
    waiting?.()
  })
  const reply = async (): Promise<string> => {
    while (lines.length === 0) await new Promise<void>(resolve => { waiting = resolve })
    return lines.shift() as string
  }
  try {
    await reply() // banner
    for (const cmd of ['EHLO relay.example.test', 'MAIL FROM:<>']) {
      socket.write(`${cmd}\r\n`)
      await reply()
    }
    socket.write(`RCPT TO:<${address}>\r\n`)
    return (await reply()).startsWith('250')
  } finally {
    socket.end('QUIT\r\n')
  }
}

interface Made {
  session: SignedIn
  /** The envelope sender of the invitation's e-mail. */
  returnPath: string
}

/** A signed-in admin, an invitation e-mailed with its return path. */
async function makeUnstored (h: TestApp, smtp: SmtpPeer, email: string): Promise<Made> {
  const session = await h.signIn({ email: `admin-${email}` })
  const seen = smtp.messages.length
  const res = await h.inject({
    method: 'POST',
    url: '/api/users/invite',
    headers: { cookie: session.cookie, 'content-type': 'application/json' },
    payload: { email, role: 'member' }
  })
  if (res.statusCode !== 200) throw new Error(`invite: ${res.statusCode} ${res.body}`)
  return { session, returnPath: (await smtp.nextMessage(seen)).from }
}

const BOUNCE_DOMAIN = 'bounces.example.test'

for (const sc of scenarios) {
  t.test(sc.name, async t => {
    const db: Database = await testDatabase(t)
    const smtp = await startSmtp(t)
    const receiver = await startFakeHttp(t)
    receiver.on('POST /hook', () => ({ status: 204 }))
    const withSlack = sc.before.ENCRYPTION_KEY !== undefined
    const slack: SlackFake | null = withSlack ? await startSlackFake(t) : null
    const common: Env = {
      SMTP_URL: smtp.url, BOUNCE_DOMAIN, BOUNCE_SMTP_PORT: '0', ...(slack !== null ? slackEnv(slack.fake) : {})
    }
    // Each phase is a service on the same database, with the phase's secrets (ENCRYPTION_KEY
    // from the phase only: slackEnv's random one is replaced or removed).
    const open = async (env: Env): Promise<{ h: TestApp, bounces: string }> => {
      const { ENCRYPTION_KEY: _k, ...rest } = common
      const h = await build(t, { db, env: { ...rest, ...env } })
      return { h, bounces: await h.app.listenBounces() ?? '' }
    }

    // Before: every artefact, under the first secrets.
    const first = await open(sc.before)
    const made = await makeUnstored(first.h, smtp, 'first@example.com')
    const idem = {
      headers: { cookie: made.session.cookie, 'content-type': 'application/json', 'idempotency-key': 'rotation-1' },
      payload: { email: 'idem@example.com', role: 'member' }
    }
    const answer = await first.h.inject({ method: 'POST', url: '/api/users/invite', ...idem })
    t.equal(answer.statusCode, 200, 'an idempotent invite')
    const link = answer.json().invitationUrl as string
    const hook = await first.h.inject({
      method: 'POST',
      url: '/api/webhook-endpoints',
      headers: { cookie: made.session.cookie, 'content-type': 'application/json' },
      payload: { url: `${receiver.url}/hook` }
    })
    t.equal(hook.statusCode, 201, 'a webhook endpoint')
    const hookSecret = hook.json().secret as string
    const hookId = hook.json().id as string
    if (slack !== null) t.equal((await install(first.h, made.session)).statusCode, 302, 'Slack installed')
    await first.h.app.close()

    const cases = (m: Made, bounces: () => string): Artefact[] => [
      {
        name: 'session',
        source: 'session',
        stored: false,
        works: async h => (await h.inject({
          method: 'GET', url: '/api/users/me', headers: { cookie: m.session.cookie }
        })).statusCode === 200
      },
      {
        name: 'bounce return path',
        source: 'session',
        stored: false,
        works: async () => await listenerTakes(bounces(), m.returnPath)
      }
    ]
    const stored: Artefact[] = [
      {
        name: 'stored Idempotency-Key answer',
        source: 'session',
        stored: true,
        works: async h => {
          // The same admin, signed in afresh (the first session may be gone with its secret).
          const { token } = await h.app.services.sessions.start(h.db, made.session.userId, 'signup')
          const headers = { ...idem.headers, cookie: `${SESSION_COOKIE}=${token}` }
          const replay = await h.inject({ method: 'POST', url: '/api/users/invite', ...idem, headers })
          return replay.statusCode === 200 && replay.json().invitationUrl === link
        }
      },
      {
        name: 'reminder link',
        source: 'at rest',
        stored: true,
        works: async h => {
          const r = await h.db.query<{ id: string, tokenHash: string | null, linkSealed: string }>(
            `SELECT id, token_hash AS "tokenHash", link_sealed AS "linkSealed" FROM invitations
              WHERE email = 'idem@example.com'`)
          const row = r.rows[0]
          if (row === undefined) throw new Error('no invitation')
          return openToken(h.config, row, row.linkSealed) === new URL(link).searchParams.get('token')
        }
      },
      {
        name: 'webhook signing secret',
        source: 'at rest',
        stored: true,
        works: async h => {
          const row = await findWebhookEndpoint(h.db, made.session.workspaceId, hookId)
          if (row === null) throw new Error('no endpoint')
          try {
            return signingSecrets(webhookKeyring(h.config), row, h.clock.now())[0] === hookSecret
          } catch {
            return false
          }
        }
      },
      ...(slack === null
        ? []
        : [{
            name: 'Slack bot token',
            source: 'encryption key' as const,
            stored: true,
            works: async (h: TestApp) => {
              const r = await h.db.query<{ enc: string }>(
                'SELECT bot_token_enc AS enc FROM chat_installations WHERE team_id = $1', [TEAM_ID])
              const ring = encryptionKeyring(h.config)
              try {
                return ring !== null && openWith(ring, r.rows[0]?.enc ?? '', botTokenContext(TEAM_ID)) === slack.botToken
              } catch {
                return false
              }
            }
          }])
    ]
    let bounceUrl = ''
    const all = [...cases(made, () => bounceUrl), ...stored]
    const changed = (a: Artefact) => keyOf(a.source, sc.before) !== keyOf(a.source, sc.after)
    t.ok(all.some(changed), 'the scenario rotates something')

    // During: the old secrets are previous ones; everything works, and what is new is made with the new.
    const during = await open(sc.during)
    bounceUrl = during.bounces
    for (const a of all) t.ok(await a.works(during.h), `during the rotation: ${a.name} works`)
    const madeDuring = await makeUnstored(during.h, smtp, 'during@example.com')
    await during.h.app.close()

    // After, not re-encrypted yet: what the old secrets made stops, stored or not.
    const early = await open(sc.after)
    bounceUrl = early.bounces
    for (const a of all) {
      t.equal(await a.works(early.h), !changed(a), `old secret dropped before re-encryption: ${a.name} ${changed(a) ? 'stops' : 'works'}`)
    }
    await early.h.app.close()

    // The re-encryption, with the rotation's settings (npm run secrets:reencrypt), then after.
    const counts = await reencryptStored({ db, config: during.h.config })
    t.equal(counts.reduce((n, c) => n + c.unreadable, 0), 0, 'every stored value opened')
    t.ok(counts.reduce((n, c) => n + c.rewritten, 0) > 0, 'something was re-encrypted')
    const again = await reencryptStored({ db, config: during.h.config })
    t.equal(again.reduce((n, c) => n + c.rewritten, 0), 0, 'a second run has nothing left to do')
    const after = await open(sc.after)
    bounceUrl = after.bounces
    // Re-encrypted under the rotation's current key: it works unless that key changed again after.
    const current = (a: Artefact) => keyOf(a.source, sc.during) === keyOf(a.source, sc.after)
    for (const a of all) {
      const expected = !changed(a) || (a.stored && current(a))
      t.equal(await a.works(after.h), expected, `after: ${a.name} ${expected ? 'works' : 'stops (not re-encryptable)'}`)
    }
    // Made during the rotation, so with its current secret: it works after unless that one changed too.
    for (const a of cases(madeDuring, () => bounceUrl)) {
      const expected = current(a)
      t.equal(await a.works(after.h), expected, `after: a ${a.name} made during the rotation ${expected ? 'works' : 'stops'}`)
    }
  })
}

t.test('previous secrets are checked as the current ones', async t => {
  t.throws(() => testConfig({ SESSION_SECRET: S1, SESSION_SECRET_PREVIOUS: `${S2},too-short` }),
    /SESSION_SECRET_PREVIOUS: each secret \(comma-separated\) must be at least 32 bytes/)
  t.throws(() => testConfig({ SESSION_SECRET: S1, ENCRYPTION_KEY: K1, ENCRYPTION_KEY_PREVIOUS: `${K2},abcd` }),
    /ENCRYPTION_KEY_PREVIOUS \(each key, comma-separated\) must be 32 bytes/)
  const c = testConfig({ SESSION_SECRET: S1, SESSION_SECRET_PREVIOUS: ` ${S2} , ${S1}`, ENCRYPTION_KEY_PREVIOUS: K1 })
  t.same(c.session.previousSecrets, [S2, S1], 'trimmed, in order')
  t.same(c.previousEncryptionKeys.map(k => k.toString('hex')), [K1], 'a previous key without a current one reads only')
})
