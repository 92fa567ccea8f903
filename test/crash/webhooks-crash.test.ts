import t from 'tap'
import { adminLink, crashEnv, serviceProcesses, signUp, stopProcess, until } from '../helpers/service-process.js'
import { freePort } from '../../scripts/lib/free-port.js'
import { startFakeHttp } from '../helpers/fake-http.js'
import { seededDataDir } from '../helpers/build.js'

// kill -9 of the service while webhook deliveries are in flight (one held by a silent receiver)
// and queued: nothing is lost. After a restart on the same database, every event arrives, each
// with the webhook-id it was first sent with. The service runs as a real child process (PGlite
// in DATA_DIR, as `npm start` does).

t.setTimeout(400_000)

const services = serviceProcesses(t)
const startService = services.start

t.test('kill -9 with deliveries in flight and queued; all delivered after the restart', async t => {
  const dataDir = await seededDataDir(t, 'webhooks-crash-')
  const receiver = await startFakeHttp(t)
  let silent = true
  receiver.on('POST /hook', () => silent ? { hang: true } : { status: 200 })
  const env = crashEnv({
    DATA_DIR: dataDir,
    JOBS_POLL_MS: '500',
    JOBS_MAINTENANCE_SECONDS: '1',
    // A held attempt is abandoned after 2 s; a job whose worker died is retried once it expires,
    // 2 × the longer of WEBHOOK_TIMEOUT_MS and SMTP_TIMEOUT_MS + 5 s (src/app.ts): 9 s with both
    // at 2 s (with SMTP's default 5 s, 15). No e-mail leaves here (no SMTP_URL).
    WEBHOOK_TIMEOUT_MS: '2000',
    SMTP_TIMEOUT_MS: '2000',
    WEBHOOK_RETRY_DELAYS_MS: '60000'
  })
  const link = await adminLink(env, 'Crash')
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const child = await startService(port, env)
  const cookie = await signUp(t, base, link)
  const post = async (path: string, body: unknown) => await fetch(`${base}${path}`, {
    method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: JSON.stringify(body)
  })
  const ep = await post('/api/webhook-endpoints', { url: `${receiver.url}/hook`, eventTypes: ['invitation.created'] })
  t.equal(ep.status, 201)
  const endpointId = (await ep.json() as { id: string }).id
  const n = 3
  for (let i = 0; i < n; i++) t.equal((await post('/api/users/invite', { email: `c${i}@example.com`, role: 'member' })).status, 200)

  await until('the first delivery to be held by the silent receiver', async () => receiver.requests.length > 0 || undefined)
  const heldId = String(receiver.requests[0]?.headers['webhook-id'])
  await stopProcess(child)
  silent = false

  const restarted = await startService(port, env)
  const ids = await until('every event delivered after the restart', async () => {
    const got = new Set(receiver.requests.map(r => String(r.headers['webhook-id'])))
    return got.size >= n && receiver.requests.some((r, i) => i > 0 && r.headers['webhook-id'] === heldId) ? got : undefined
  })
  t.equal(ids.size, n, `${n} events, each delivered (${receiver.requests.length} requests in all)`)
  t.ok(receiver.requests.filter(r => r.headers['webhook-id'] === heldId).length >= 2,
    'the attempt cut by the kill was made again with the same webhook-id')
  const deliveries = await until('the deliveries to be recorded', async () => {
    const r = await fetch(`${base}/api/webhook-endpoints/${endpointId}/deliveries`, {
      headers: { cookie }
    })
    const body = await r.json() as { items: Array<{ status: string }> }
    return body.items.every(d => d.status === 'succeeded') && body.items.length === n ? body.items : undefined
  })
  t.equal(deliveries.length, n, 'and recorded as succeeded')
  await stopProcess(restarted, 'SIGTERM')
})
