import t from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { connect, type AddressInfo } from 'node:net'
import { Worker } from 'node:worker_threads'
import { holdSockets, spawnService } from '../../scripts/lib/cluster.js'
import { StartupError } from '../../src/config/error.js'
import { listenSocket } from '../../src/config/listen-socket.js'
import { build, seededDataDir } from '../helpers/build.js'
import { tsImport } from '../helpers/service-process.js'

// Issue 45 item 9, the loss no drain can prevent. nginx kept sending requests to a draining
// instance (open-source nginx has no health checks: `http_503` only passes on a GET or HEAD that
// was answered 503), on new connections since every drained answer closes its connection. The
// kernel completes a connection to a listening port by itself and queues it, with whatever the
// peer sends on it, until the process accept()s it; the service accepts only between other work
// on its event loop. When the listener is then closed, Linux resets every connection still
// queued: nginx had already written the request (its connect() succeeded), gets `recv() failed
// (104: Connection reset by peer)` and retries no POST or PATCH (a 502).
//
// Made exactly here: the service's event loop is held (Atomics.wait in the last preClose hook,
// right before Fastify closes the server in the same tick) while a client on another thread
// connects and sends a PATCH; then the loop goes on and closes the listener. That request is
// reset, every time, whatever the service does after: it never saw the connection. Hence the
// documented rolling restart takes the instance out of nginx before SIGTERM
// (test/ops/rolling-restart.test.ts shows that side, with nginx).

const client = `
const { parentPort, workerData } = require('node:worker_threads')
const { connect } = require('node:net')
const sent = new Int32Array(workerData.flag)
parentPort.once('message', ({ port, request }) => {
  const socket = connect(port, '127.0.0.1')
  let data = ''
  socket.setEncoding('latin1')
  socket.on('data', c => { data += c })
  socket.once('connect', () => {
    // connect() succeeded although the service accepted nothing: the kernel queued the connection.
    socket.write(request, () => { Atomics.store(sent, 0, 1); Atomics.notify(sent, 0) })
  })
  socket.once('error', e => { parentPort.postMessage({ ended: e.code, data }) })
  socket.once('close', () => { parentPort.postMessage({ ended: 'closed', data }) })
})
`

t.test('a request on a connection still in the accept queue when the listener closes is reset', async t => {
  const flag = new SharedArrayBuffer(4)
  const worker = new Worker(client, { eval: true, workerData: { flag } })
  t.teardown(async () => { await worker.terminate() })
  const outcome = new Promise<{ ended: string, data: string }>(resolve => worker.once('message', resolve))

  let port = 0
  let request = ''
  let sentWhileHeld = false
  let accepted = 0
  const { app, signIn } = await build(t, {
    env: { SHUTDOWN_DRAIN_MS: '100' },
    // Registered last, so it runs last: Fastify closes the server right after it, in the same tick.
    beforeReady: app => {
      app.addHook('preClose', done => {
        worker.postMessage({ port, request })
        // Until the client has sent (it may have, on a busy machine, before the wait even starts).
        Atomics.wait(new Int32Array(flag), 0, 0, 20_000)
        sentWhileHeld = Atomics.load(new Int32Array(flag), 0) === 1
        done()
      })
    }
  })
  const admin = await signIn()
  await app.listen({ port: 0, host: '127.0.0.1' })
  port = (app.server.address() as AddressInfo).port
  app.server.on('connection', () => { accepted++ })
  const body = JSON.stringify({ name: 'Renamed in the accept queue' })
  request = `PATCH /api/workspace/settings HTTP/1.1\r\nhost: service\r\ncookie: ${admin.cookie}\r\n` +
    `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`

  await app.drain(app.config.shutdownDrainMs)
  await app.close()
  const { ended, data } = await outcome

  t.ok(sentWhileHeld, 'the client connected and sent its PATCH while the service\'s event loop was held')
  t.equal(accepted, 0, 'the service never accepted the connection')
  t.equal(ended, 'ECONNRESET', 'closing the listener reset it')
  t.equal(data, '', 'no answer: the request was never read')
})

t.test('held outside the process, as systemd holds it, the socket keeps a queued request for the next process', async t => {
  const held = await holdSockets(1)
  t.teardown(async () => { await held.release() })
  const { port, fd } = held.sockets[0] as { port: number, fd: number }
  const children: ChildProcess[] = []
  t.teardown(() => { for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL') })

  // A process listening on the socket (descriptor 3), its event loop then held for good (stopped).
  const first = spawn(process.execPath, ['-e', `require('node:net').createServer(s => s.end()).listen({ fd: 3 },
    () => process.stdout.write('listening'))`], { stdio: ['ignore', 'pipe', 'inherit', fd] })
  children.push(first)
  await new Promise(resolve => first.stdout?.once('data', resolve))
  first.kill('SIGSTOP')
  // A client connects and sends a POST: the kernel queues both.
  const socket = connect(port, '127.0.0.1')
  let data = ''
  socket.setEncoding('latin1')
  socket.on('data', (c: string) => { data += c })
  const ended = new Promise<string>(resolve => {
    socket.once('error', (e: Error & { code?: string }) => { resolve(e.code ?? e.message) })
    socket.once('close', () => { resolve('closed') })
  })
  await new Promise<void>((resolve, reject) => { socket.once('connect', resolve).once('error', reject) })
  const body = JSON.stringify({ email: 'someone@example.com' })
  await new Promise<void>((resolve, reject) => {
    socket.write('POST /api/auth/login-link HTTP/1.1\r\nhost: service\r\nconnection: close\r\n' +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    err => { if (err === undefined || err === null) resolve(); else reject(err) })
  })
  // The process ends with the connection still queued: its descriptor of the socket is closed.
  const gone = new Promise(resolve => first.once('exit', resolve))
  first.kill('SIGKILL')
  await gone

  // The service, started on the socket as systemd starts it (LISTEN_FDS, LISTEN_PID, descriptor 3).
  const service = spawnService(tsImport, {
    PATH: process.env.PATH ?? '',
    DATA_DIR: await seededDataDir(t, 'ws-accept-queue-'),
    SESSION_SECRET: 's'.repeat(40),
    LOG_LEVEL: 'warn',
    METRICS_PORT: '',
    PORT: '0' // not used on a passed socket
  }, fd)
  children.push(service)
  let log = ''
  service.stdout?.on('data', (b: Buffer) => { log += b.toString() })
  service.stderr?.on('data', (b: Buffer) => { log += b.toString() })
  const exited = new Promise<string>(resolve => service.once('exit', code => { resolve(`exited ${code}: ${log}`) }))
  const late = new Promise<string>(resolve => setTimeout(() => { resolve('no answer within 2 minutes') }, 120_000).unref())
  t.equal(await Promise.race([ended, exited, late]), 'closed', 'the connection was not reset: it ends in order, answered')
  t.match(data, /^HTTP\/1\.1 202 /, 'the service, next on the socket, answered the POST queued before it started')
  if (data.startsWith('HTTP/1.1 202 ')) {
    const health = await fetch(`http://127.0.0.1:${port}/api/health`)
    t.equal(health.status, 200, 'and serves on')
  }
})

t.test('the socket systemd passes is taken by the process it names, and by no other', async t => {
  const passed = (env: Record<string, string>): Record<string, string | undefined> => ({ PATH: '/bin', ...env })
  let env = passed({ LISTEN_FDS: '1', LISTEN_PID: '42', LISTEN_FDNAMES: 'workspace@3001.socket' })
  t.equal(listenSocket(env, 42), 3, 'descriptor 3, passed to this process')
  t.same(env, { PATH: '/bin' }, 'the variables are removed: nothing this process starts takes them')
  t.equal(listenSocket(passed({}), 42), null, 'none passed: the service listens on PORT')
  env = passed({ LISTEN_FDS: '1', LISTEN_PID: '41' })
  t.throws(() => listenSocket(env, 42), StartupError, 'passed to another process (npm, running the service as its child): refused')
  t.same(env, { PATH: '/bin' })
  t.throws(() => listenSocket(passed({ LISTEN_FDS: '2', LISTEN_PID: '42' }), 42), /2 sockets/, 'two sockets: refused')
})
