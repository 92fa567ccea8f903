import t from 'tap'
import { connect, type AddressInfo, type Socket } from 'node:net'
import { once } from 'node:events'
import { request as httpRequest } from 'node:http'
import { Writable } from 'node:stream'
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { build, seededDataDir } from '../helpers/build.js'
import { tsImport, until } from '../helpers/service-process.js'
import { loggerOptions } from '../../src/logger.js'
import { projectRoot } from '../../src/paths.js'
import { freePort } from '../../scripts/lib/free-port.js'

// One client holding idle sockets must not leave others without a connection: open connections
// are capped per peer address (MAX_CONNECTIONS_PER_ADDRESS) and in all (MAX_CONNECTIONS), a new
// connection past a cap is closed at once, reaching a cap is logged, and /api/health keeps
// answering other clients, and the same client once its sockets are gone. Real sockets, one
// source address per client (127.0.0.N).

async function idleSocket (port: number, from: string): Promise<Socket> {
  const socket = connect({ port, host: '127.0.0.1', localAddress: from })
  socket.on('error', () => {})
  await once(socket, 'connect')
  return socket
}

/** Whether the server closes a fresh connection from `from` within `ms` (without answering). */
async function closedByServer (port: number, from: string, ms = 3000): Promise<boolean> {
  const socket = await idleSocket(port, from)
  const closed = await Promise.race([
    once(socket, 'close').then(() => true),
    new Promise<boolean>(resolve => setTimeout(() => { resolve(false) }, ms))
  ])
  socket.destroy()
  return closed
}

async function health (port: number, from: string, path = '/api/health'): Promise<number | string> {
  const req = httpRequest({ host: '127.0.0.1', port, localAddress: from, path, agent: false })
  req.end()
  try {
    const [res] = await once(req, 'response') as [import('node:http').IncomingMessage]
    res.resume()
    return res.statusCode ?? 0
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? 'error'
  }
}

async function start (t: Parameters<typeof build>[0], env: Record<string, string>) {
  let out = ''
  const stream = new Writable({ write (chunk, _enc, cb) { out += String(chunk); cb() } })
  const h = await build(t, { env, logger: { ...loggerOptions('warn'), stream } })
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  const sockets: Socket[] = []
  t.teardown(() => { for (const s of sockets) s.destroy() })
  return { port: (h.app.server.address() as AddressInfo).port, sockets, logs: () => out }
}

t.test('one address holding its cap of idle sockets: its next connection is closed, others are served', async t => {
  const { port, sockets, logs } = await start(t, { MAX_CONNECTIONS_PER_ADDRESS: '5', MAX_CONNECTIONS: '0' })
  for (let i = 0; i < 5; i++) sockets.push(await idleSocket(port, '127.0.0.2'))
  t.ok(await closedByServer(port, '127.0.0.2'), 'the 6th connection from 127.0.0.2 is closed at once')
  t.equal(
    await health(port, '127.0.0.2', '/api/users/me'), 503,
    'a request on a connection past the cap is answered 503 (Retry-After), not reset: no 502 behind a proxy'
  )
  t.equal(await health(port, '127.0.0.3'), 200, 'another client gets /api/health')
  t.match(logs(), /per-address connection cap reached \(MAX_CONNECTIONS_PER_ADDRESS\)/)
  t.match(logs(), /"remoteAddress":"127\.0\.0\.2"/)
  for (const s of sockets.splice(0)) s.destroy()
  // The server sees the closes shortly after.
  t.ok(
    await until('127.0.0.2 served again', async () => (await health(port, '127.0.0.2')) === 200 || undefined, 5000),
    'once its sockets are gone, the same address is served again'
  )
})

t.test('the global cap: past MAX_CONNECTIONS a new connection is closed, logged; served again below it', async t => {
  const { port, sockets, logs } = await start(t, { MAX_CONNECTIONS_PER_ADDRESS: '4', MAX_CONNECTIONS: '12' })
  for (let a = 10; a < 13; a++) for (let i = 0; i < 4; i++) sockets.push(await idleSocket(port, `127.0.0.${a}`))
  t.ok(await closedByServer(port, '127.0.0.20'), 'the 13th connection (another address) is closed')
  t.match(logs(), /connection cap reached \(MAX_CONNECTIONS\)/)
  sockets.shift()?.destroy()
  t.ok(
    await until('a new address served again', async () => (await health(port, '127.0.0.21')) === 200 || undefined, 5000),
    'below the cap again, /api/health answers'
  )
})

t.test('one address churning 1,500 idle connections at a service limited to 1,024 descriptors: others are served', async t => {
  // The service as it runs (a child process, the embedded database) under `ulimit -n 1024`, the
  // caps at their defaults (100 per address, 800 in all). A connection over a cap must give its
  // descriptor back at once: held for a second each, the churn below kept over a thousand spent,
  // and the accepts of everyone else failed (EMFILE).
  const dir = await seededDataDir(t, 'ws-caps-fd-')
  const port = await freePort()
  const { DATABASE_URL: _db, REDIS_URL: _redis, NODE_OPTIONS: _loaders, ...env } = process.env
  const child = spawn('sh', ['-c', 'ulimit -n 1024 && exec "$@"', 'sh', process.execPath, ...tsImport, 'src/server.ts'], {
    cwd: projectRoot,
    env: { ...env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dir, LOG_LEVEL: 'warn', METRICS_PORT: '' },
    stdio: ['ignore', 'ignore', 'pipe']
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  await until('the service', async () => (await health(port, '127.0.0.3')) === 200 ? true : undefined)
  const limit = readFileSync(`/proc/${child.pid ?? 0}/limits`, 'utf8').match(/Max open files\s+(\d+)/)?.[1]
  t.equal(limit, '1024', 'the service may open 1,024 descriptors')

  // 1,500 idle connections from 127.0.0.2, each opened again as soon as it is closed.
  let stopped = false
  let opened = 0
  const churners = new Set<Socket>()
  const open = (): void => {
    if (stopped) return
    const socket = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.2' })
    opened++
    churners.add(socket)
    socket.on('error', () => {})
    socket.on('close', () => { churners.delete(socket); setTimeout(open, 50) })
  }
  for (let i = 0; i < 1500; i++) open()
  t.teardown(() => { stopped = true; for (const s of churners) s.destroy() })
  // Under way: most churners closed by the caps and opened again.
  const underWay = await until('the churn under way', () => opened > 3000 ? opened : undefined, 60_000)

  // Health checks from another address while it lasts, as a load balancer's.
  const statuses: Array<number | string> = []
  for (let i = 0; i < 20; i++) {
    statuses.push(await Promise.race([
      health(port, '127.0.0.3'),
      // Generous on a loaded machine: what failed here was a reset (EMFILE at accept), not a slow answer.
      new Promise<string>(resolve => setTimeout(() => { resolve('no answer in 15 s') }, 15_000))
    ]))
    // A fixed pause, kept: the checks are spread over the churn as a load balancer's are, in time.
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  t.comment(`${opened} connections opened from 127.0.0.2 meanwhile`)
  t.ok(opened > underWay, `the churn went on during the checks (${opened} opened, ${underWay} before them)`)
  t.same(statuses.filter(s => s !== 200), [], 'every health check from another address answered 200')
  const fds = readdirSync(`/proc/${child.pid ?? 0}/fd`).length
  t.ok(fds < 600, `the service holds ${fds} descriptors, not its limit`)
  stopped = true
  for (const s of churners) s.destroy()
  t.equal(child.exitCode, null, 'and it is still running')
})
