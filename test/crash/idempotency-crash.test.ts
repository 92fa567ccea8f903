import t from 'tap'
import { freePort } from '../../scripts/lib/free-port.js'
import { adminLink, crashEnv, serviceProcesses, signUp, stopProcess, until } from '../helpers/service-process.js'
import { startSmtp, startSmtpFront } from '../helpers/smtp.js'
import { seededDataDir } from '../helpers/build.js'

// kill -9 during a send, then a retry with the same Idempotency-Key on the restarted service:
// the dead request's claim is a lease nobody renews, so the retry runs once it has run out
// (IDEMPOTENCY_LEASE_MS, seconds) instead of answering 409 for 10 minutes. One e-mail arrives.

const LEASE_MS = 3000

// Three child processes start here (create-admin, the service twice); on a loaded machine each
// takes a while, so this file gets more than the suite's default 120 s.
t.setTimeout(400_000)

const services = serviceProcesses(t)
const startService = services.start

t.test('kill -9 during a send; the retry with the same key succeeds within the lease', async t => {
  const dataDir = await seededDataDir(t, 'idem-crash-')
  const smtp = await startSmtp(t)
  const front = await startSmtpFront(t, smtp)
  const env = crashEnv({
    DATA_DIR: dataDir,
    SMTP_URL: front.url,
    SMTP_TIMEOUT_MS: '60000', // the send is held by the silent server until the kill
    IDEMPOTENCY_LEASE_MS: String(LEASE_MS)
  })

  // The first admin, through the real script and the real signup.
  const link = await adminLink(env, 'Crash')
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const child = await startService(port, env)
  const cookie = await signUp(t, base, link)
  const invite = async () => await fetch(`${base}/api/users/invite`, {
    method: 'POST',
    headers: {
      cookie,
      'content-type': 'application/json',
      'idempotency-key': 'k-crash'
    },
    body: JSON.stringify({ email: 'crash@example.com', role: 'member' })
  })

  front.silent()
  const pending = invite().catch(() => null) // never answered: the process dies
  await until('the send to reach the SMTP server', async () => front.held() > 0 ? true : undefined)
  const killedAt = performance.now()
  await stopProcess(child)
  t.equal(await pending, null, 'the first request got no answer')
  await front.up()

  const restarted = await startService(port, env)
  const statuses: number[] = []
  const retry = await until('the retry to succeed', async () => {
    const r = await invite()
    statuses.push(r.status)
    if (r.status === 409) t.equal(((await r.json()) as { code: string }).code, 'IDEMPOTENCY_KEY_IN_USE')
    return r.status === 409 ? undefined : r
  }, 60_000)
  const after = performance.now() - killedAt
  t.equal(
    retry.status, 200,
    `the retry succeeded ${Math.round(after)} ms after the kill (lease ${LEASE_MS} ms; answers ${statuses.join(', ')})`
  )
  t.ok(after < 60_000, 'within a minute')
  const replay = await invite()
  t.same(await replay.json(), await retry.json(), 'and is now the key\'s answer')
  await front.idle()
  t.equal(smtp.messages.filter(m => m.to.includes('crash@example.com')).length, 1, 'one e-mail arrived')
  await stopProcess(restarted, 'SIGTERM')
})
