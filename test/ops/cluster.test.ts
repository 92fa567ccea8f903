import t from 'tap'
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import pg from 'pg'
import { freePort } from '../../scripts/lib/free-port.js'
import { startCluster } from '../../scripts/lib/cluster.js'
import { startCommand } from '../../scripts/lib/start-command.js'
import { nginxBinary } from '../../scripts/lib/nginx.js'
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../helpers/build.js'
import { tsImport } from '../helpers/service-process.js'

// Three instances on one PostgreSQL and Redis behind nginx (scripts/lib/cluster.ts, as `npm run
// cluster` starts them), under steady load — reads, invitations, sign-in links, health — while
// each instance in turn is stopped (SIGTERM: it drains) and started again. Not one request may
// fail. Before SHUTDOWN_DRAIN_MS, two instances behind nginx with upstream keep-alive lost 1
// request in 5,695 this way.

const skip = nginxBinary() === null
  ? 'nginx is not installed (scripts/setup-nginx.sh)'
  : TEST_DATABASE_URL === null || TEST_REDIS_URL === null ? 'TEST_DATABASE_URL and TEST_REDIS_URL not set' : false
t.setTimeout(600_000)

interface Sample { at: number, ms: number, ok: boolean, what: string }

t.test('a rolling restart of three instances under load: not one request fails', { skip }, async t => {
  // A database of its own (the instances are separate processes: a schema per app will not do).
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL as string })
  await admin.connect()
  const name = `ws_cluster_${randomBytes(5).toString('hex')}`
  await admin.query(`CREATE DATABASE ${name}`)
  t.teardown(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.end()
  })
  const url = new URL(TEST_DATABASE_URL as string)
  url.pathname = `/${name}`
  const port = await freePort()
  const { NODE_OPTIONS: _loaders, DATABASE_URL: _db, ...base } = process.env
  const cluster = await startCluster({
    instances: 3,
    port,
    nodeArgs: tsImport,
    env: {
      ...Object.fromEntries(Object.entries(base).filter((e): e is [string, string] => e[1] !== undefined)),
      DATABASE_URL: url.href,
      REDIS_URL: TEST_REDIS_URL as string,
      SESSION_SECRET: randomBytes(32).toString('base64url'),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      INVITE_EMAILS_PER_HOUR: '100000',
      AUTH_RATE_LIMIT_PER_MINUTE: '100000',
      LOG_LEVEL: 'info',
      METRICS_PORT: ''
    }
  })
  t.teardown(async () => { await cluster.close() })

  // Each instance is the process `npm start` runs, but for the loader: its node flags (the heap's cap).
  for (const [i, instance] of cluster.instances.entries()) {
    const args = readFileSync(`/proc/${instance.process?.pid ?? 0}/cmdline`, 'utf8').split('\0')
    for (const flag of startCommand().nodeFlags) t.ok(args.includes(flag), `instance ${i + 1} runs with ${flag}`)
  }

  // The first admin, through the proxy, with the setup link an instance logged.
  const token = cluster.instances.map(i => /\/setup\?token=([A-Za-z0-9_-]+)/.exec(i.log())?.[1]).find(x => x !== undefined)
  t.ok(token, 'an instance logged the setup link')
  const setup = await fetch(`${cluster.url}/api/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token, workspaceName: 'Cluster', email: 'admin@cluster.test' })
  })
  t.equal(setup.status, 201, 'setup through the proxy')
  const cookie = (setup.headers.get('set-cookie') ?? '').split(';')[0] as string

  let n = 0
  const requests: Array<{ what: string, expect: number, send: () => Promise<Response> }> = [
    { what: 'GET /api/users/me', expect: 200, send: async () => await fetch(`${cluster.url}/api/users/me`, { headers: { cookie } }) },
    {
      what: 'POST /api/users/invite',
      expect: 200,
      send: async () => await fetch(`${cluster.url}/api/users/invite`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json' },
        body: JSON.stringify({ email: `person-${++n}@cluster.test`, role: 'member' })
      })
    },
    {
      what: 'POST /api/auth/login-link',
      expect: 202,
      send: async () => await fetch(`${cluster.url}/api/auth/login-link`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'admin@cluster.test' })
      })
    },
    { what: 'GET /api/health', expect: 200, send: async () => await fetch(`${cluster.url}/api/health`) }
  ]
  const samples: Sample[] = []
  const failures: string[] = []
  const load$ = { running: true }
  const worker = async (w: number): Promise<void> => {
    for (let k = w; load$.running; k++) {
      const r = requests[k % requests.length] as (typeof requests)[number]
      const started = performance.now()
      let ok = false
      let why = ''
      try {
        const res = await r.send()
        await res.arrayBuffer()
        ok = res.status === r.expect
        why = String(res.status)
      } catch (err) {
        why = (err as Error).message
      }
      samples.push({ at: Date.now(), ms: performance.now() - started, ok, what: r.what })
      if (!ok) failures.push(`${r.what}: ${why}`)
    }
  }
  const load = Promise.all(Array.from({ length: 6 }, async (_v, w) => { await worker(w) }))

  await new Promise(resolve => setTimeout(resolve, 3000))
  const restartFrom = Date.now()
  for (const [i, instance] of cluster.instances.entries()) {
    t.equal(await instance.stop(), 0, `instance ${i + 1} stopped cleanly (it drained)`)
    await instance.start()
  }
  const restartTo = Date.now()
  await new Promise(resolve => setTimeout(resolve, 2000))
  load$.running = false
  await load

  const p99 = (xs: number[]): number => {
    const s = [...xs].sort((a, b) => a - b)
    return Math.round(s[Math.min(s.length - 1, Math.floor(s.length * 0.99))] ?? 0)
  }
  const during = samples.filter(s => s.at >= restartFrom && s.at <= restartTo)
  const steady = samples.filter(s => s.at < restartFrom || s.at > restartTo)
  t.comment(JSON.stringify({
    requests: samples.length,
    failed: failures.length,
    duringRestarts: during.length,
    p99SteadyMs: p99(steady.map(s => s.ms)),
    p99DuringRestartsMs: p99(during.map(s => s.ms)),
    restartsMs: restartTo - restartFrom
  }))
  t.ok(during.length > 0, `${during.length} requests were sent while instances restarted`)
  t.same(failures, [], `not one of ${samples.length} requests failed`)

  // Stopped, the cluster leaves nothing in the temporary directory it made (about 9 MB a run before).
  t.ok(existsSync(cluster.dir), 'its directory while it runs')
  await cluster.close()
  t.notOk(existsSync(cluster.dir), 'gone once it is closed')
})
