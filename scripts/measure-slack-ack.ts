// Acknowledgement time of Slack's slash command: N signed `/invite` commands, sequential, over
// real HTTP (loopback, keep-alive) to the app as production builds it, with the Slack Web API
// and the response_url served by a minimal loopback peer and e-mail by a sink SMTP server. Slack
// gives up after 3 s; the work (users.info, the invitation and its e-mail, the answer on the
// response_url) happens after the acknowledgement, and its completion time is reported too.
//
//   npx tsx scripts/measure-slack-ack.ts                    # PGlite in memory, 200 commands
//   npx tsx scripts/measure-slack-ack.ts --db postgres --url postgres://postgres@127.0.0.1:5432/postgres
import { parseArgs } from 'node:util'
import { createServer } from 'node:http'
import { randomBytes } from 'node:crypto'
import { databaseOptions, startMeasuredApp } from './lib/measure-peers.js'
import { insertUser } from '../src/db/users.js'
import { upsertChatInstallation } from '../src/db/chat-installations.js'
import { encryptSecret } from '../src/lib/crypto.js'
import { botTokenContext } from '../src/slack/service.js'
import { slackSignature } from '../src/slack/signature.js'

const { values } = parseArgs({
  options: {
    ...databaseOptions,
    n: { type: 'string', default: '200' },
    warmup: { type: 'string', default: '10' }
  },
  strict: true
})
const n = Number(values.n)
const warmup = Number(values.warmup)

const ADMIN_EMAIL = `admin-${randomBytes(4).toString('hex')}@example.com`
const SIGNING_SECRET = randomBytes(16).toString('hex')
const TEAM_ID = 'T0MEASURE'

// Slack's side: every Web API method answers ok (users.info with the admin's e-mail); a POST to
// /respond/<i> is command i's answer on its response_url.
const answered = new Map<number, number>()
const slack = createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    const m = /^\/respond\/(\d+)$/.exec(req.url ?? '')
    if (m !== null) answered.set(Number(m[1]), performance.now())
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ ok: true, ts: '1.1', user: { id: 'U0ADMIN', profile: { email: ADMIN_EMAIL } } }))
  })
})
await new Promise<void>(resolve => { slack.listen(0, '127.0.0.1', resolve) })
const slackUrl = `http://127.0.0.1:${(slack.address() as { port: number }).port}`

const encryptionKey = randomBytes(32)
const { app, db, base, smtp, workspaceId, close } = await startMeasuredApp({
  db: values.db,
  url: values.url,
  dataDir: null,
  env: {
    INVITE_EMAILS_PER_HOUR: '100000',
    SLACK_CLIENT_ID: '1.2',
    SLACK_CLIENT_SECRET: 'measure',
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SLACK_API_URL: slackUrl,
    ENCRYPTION_KEY: encryptionKey.toString('hex')
  }
})

const now = new Date()
const admin = await insertUser(db, { workspaceId, email: ADMIN_EMAIL, name: 'Admin', role: 'admin', now })
await upsertChatInstallation(db, {
  workspaceId,
  platform: 'slack',
  teamId: TEAM_ID,
  teamName: 'Measure',
  botUserId: 'U0BOT',
  appId: 'A0APP',
  scopes: 'commands',
  botTokenEnc: encryptSecret(encryptionKey, `xoxb-${randomBytes(8).toString('hex')}`, botTokenContext(TEAM_ID)),
  installedBy: admin.id,
  now
})

const acks: number[] = []
const done: number[] = []
const sent = new Map<number, number>()
let failures = 0
for (let i = 0; i < warmup + n; i++) {
  const body = new URLSearchParams({
    team_id: TEAM_ID,
    channel_id: 'C0MEASURE',
    user_id: 'U0ADMIN',
    command: '/invite',
    text: `invitee-${i}@example.com`,
    response_url: `${slackUrl}/respond/${i}`,
    trigger_id: `${Date.now()}.${i}.${randomBytes(4).toString('hex')}`
  }).toString()
  const ts = String(Math.floor(Date.now() / 1000))
  const t0 = performance.now()
  const res = await fetch(`${base}/api/slack/commands`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': ts,
      'x-slack-signature': slackSignature(SIGNING_SECRET, ts, body)
    },
    body
  })
  await res.arrayBuffer()
  if (res.status !== 200) failures++
  if (i >= warmup) {
    acks.push(performance.now() - t0)
    sent.set(i, t0)
  }
}
await app.services.slack.whenIdle()
for (const [i, t0] of sent) {
  const at = answered.get(i)
  if (at === undefined) failures++
  else done.push(at - t0)
}

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  const pct = (p: number) => s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN
  const f = (x: number) => x.toFixed(2)
  return { p50: f(pct(50)), p90: f(pct(90)), p99: f(pct(99)), max: f(s.at(-1) ?? NaN) }
}
console.log(JSON.stringify({
  database: db.kind,
  commands: n,
  warmup,
  failures,
  emailsReceived: smtp.received(),
  ackMs: stats(acks),
  answeredOnResponseUrlMs: stats(done),
  node: process.version
}, null, 2))

await close()
slack.close()
process.exit(failures === 0 ? 0 : 1)
