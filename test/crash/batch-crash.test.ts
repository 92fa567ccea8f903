import t from 'tap'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { freePort } from '../../scripts/lib/free-port.js'
import { adminLink, crashEnv, serviceProcesses, signUp, stopProcess, until } from '../helpers/service-process.js'
import { startSmtp } from '../helpers/smtp.js'
import { TEST_DATABASE_URL, seededDataDir } from '../helpers/build.js'

// kill -9 in the middle of a batch of 1,000 invitations: the service (a real child process) has
// sent 300 e-mails, and SMTP_POOL_CONNECTIONS more are on the wire, held by the relay without an
// answer, when it dies. After a restart on the same data the batch completes: every address gets
// exactly one e-mail (the relay counts per address), nobody twice, nobody skipped. The held
// sends were never accepted (no 250), so they are the ones the restarted service sends again.
// On PGlite (DATA_DIR), and on PostgreSQL too when TEST_DATABASE_URL is set (a database of its own).

t.setTimeout(600_000)

const ROWS = 1000
const SENT_BEFORE_KILL = 300
const POOL = 5

const services = serviceProcesses(t)

async function database (t: { teardown(fn: () => unknown): void }): Promise<Record<string, string>> {
  const dataDir = await seededDataDir(t, 'batch-crash-')
  if (TEST_DATABASE_URL === null) return { DATA_DIR: dataDir }
  const name = `ws_batch_crash_${randomBytes(5).toString('hex')}`
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  t.teardown(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.end()
  })
  const url = new URL(TEST_DATABASE_URL)
  url.pathname = `/${name}`
  return { DATA_DIR: dataDir, DATABASE_URL: url.toString() }
}

t.test('kill -9 in the middle of a batch of 1,000: it completes, one e-mail each', async t => {
  const smtp = await startSmtp(t)
  const env = crashEnv({
    ...await database(t),
    SMTP_URL: smtp.url,
    SMTP_POOL_CONNECTIONS: String(POOL),
    // The held sends wait for an answer until the kill, which follows within a poll (100 ms) of
    // the pool filling. A dead worker's job is run again once it expires: 2 × the longer of
    // SMTP_TIMEOUT_MS and WEBHOOK_TIMEOUT_MS + 5 s (src/app.ts), found by the maintenance every
    // second; a dead send's lease runs out within IDEMPOTENCY_LEASE_MS. At 60 s the restarted
    // service waited 125 s for the killed chunk; at 10 s, 25 s. A send that did time out before
    // the kill (a stalled machine) is retried by its job and held again: it was never accepted.
    SMTP_TIMEOUT_MS: '10000',
    INVITE_EMAILS_PER_HOUR: '5000',
    WEBHOOK_TIMEOUT_MS: '1000',
    JOBS_MAINTENANCE_SECONDS: '1',
    IDEMPOTENCY_LEASE_MS: '2000'
  })
  const t0 = performance.now()
  const at = (what: string): void => { t.comment(`${what} at ${Math.round(performance.now() - t0)} ms`) }
  const link = await adminLink(env, 'Batch')
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const child = await services.start(port, env)
  const cookie = await signUp(t, base, link)
  at('started')
  const emails = Array.from({ length: ROWS }, (_, i) => `crash${i}@example.com`)
  interface Batch { id: string, status: string, delivery: { queued: number, sent: number, failed: number } }
  const batchNow = async (id: string): Promise<Batch> =>
    await (await fetch(`${base}/api/invitation-batches/${id}?limit=1`, { headers: { cookie } })).json() as Batch

  smtp.holdFrom = SENT_BEFORE_KILL
  const res = await fetch(`${base}/api/invitations/batch`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/json', 'idempotency-key': 'crash-batch' },
    body: JSON.stringify({ rows: emails.map(email => ({ email })) })
  })
  t.equal(res.status, 202, 'accepted')
  at('batch accepted')
  const { id } = await res.json() as Batch
  // The moment: 300 accepted and recorded as sent, the pool's connections all waiting for a 250.
  let last = ''
  await until('300 sent and the pool busy', async () => {
    const sent = (await batchNow(id)).delivery.sent
    last = `sent ${sent}, accepted ${smtp.messages.length}, held ${smtp.held}`
    const quiet = sent === SENT_BEFORE_KILL && smtp.messages.length === SENT_BEFORE_KILL
    return smtp.held >= POOL && quiet ? true : undefined
  }, 120_000).catch((err: Error) => { throw new Error(`${err.message} (${last})`) })
  at('killing')
  await stopProcess(child)
  t.equal(smtp.messages.length, SENT_BEFORE_KILL, `${SENT_BEFORE_KILL} e-mails accepted before the kill, ${smtp.held} held unanswered`)
  smtp.holdFrom = null

  const restarted = await services.start(port, env)
  at('restarted')
  const done = await until('the batch to complete after the restart', async () => {
    const b = await batchNow(id)
    return b.status === 'completed' ? b : undefined
  }, 300_000)
  at('completed')
  t.same(done.delivery, { queued: 0, sent: ROWS, failed: 0, cancelled: 0 }, 'every row sent')
  const perAddress = new Map<string, number>()
  for (const m of smtp.messages) for (const to of m.to) perAddress.set(to, (perAddress.get(to) ?? 0) + 1)
  t.equal(emails.filter(e => perAddress.get(e) === undefined).length, 0, 'nobody skipped')
  t.same(emails.filter(e => (perAddress.get(e) ?? 0) > 1), [], 'nobody e-mailed twice')
  t.equal(smtp.messages.length, ROWS, `${ROWS} e-mails in all`)
  await stopProcess(restarted, 'SIGTERM')
})
