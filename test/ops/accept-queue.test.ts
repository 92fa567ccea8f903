import t from 'tap'
import type { AddressInfo } from 'node:net'
import { Worker } from 'node:worker_threads'
import { build } from '../helpers/build.js'

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
  let held = 'not held'
  let accepted = 0
  const { app, signIn } = await build(t, {
    env: { SHUTDOWN_DRAIN_MS: '100' },
    // Registered last, so it runs last: Fastify closes the server right after it, in the same tick.
    beforeReady: app => {
      app.addHook('preClose', done => {
        worker.postMessage({ port, request })
        held = Atomics.wait(new Int32Array(flag), 0, 0, 20_000)
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

  t.equal(held, 'ok', 'the client connected and sent its PATCH while the service\'s event loop was held')
  t.equal(accepted, 0, 'the service never accepted the connection')
  t.equal(ended, 'ECONNRESET', 'closing the listener reset it')
  t.equal(data, '', 'no answer: the request was never read')
})
