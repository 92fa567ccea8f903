import t from 'tap'
import { connect, type Socket } from 'node:net'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { build } from '../helpers/build.js'

// Slow clients are bounded by the server options production uses (serverOptions in src/app.ts):
// a request whose headers or body trickle in is closed once HEADERS_TIMEOUT_MS /
// REQUEST_TIMEOUT_MS have passed, a silent connection after CONNECTION_TIMEOUT_MS, and while
// 200 such connections are open the service keeps answering. Short bounds here; the mechanism
// is the same at the defaults (10 s, 30 s, 120 s).

const HEADERS_MS = 1000
const REQUEST_MS = 2000
const IDLE_MS = 3000
// Node checks the header and request bounds once a second (connectionsCheckingInterval).
const CHECK_MS = 1000

interface Observed { closedAfterMs: number | null, status: number | null, body?: string }

/** Opens a connection, sends `head`, then one byte of `trickle` every `everyMs` until the server closes it. */
function slowClient (
  port: number,
  head: string,
  trickle: string,
  everyMs: number
): { socket: Socket, done: Promise<Observed> } {
  const started = performance.now()
  const socket = connect(port, '127.0.0.1')
  let received = ''
  let i = 0
  socket.on('data', (c: Buffer) => { received += c.toString() })
  socket.on('error', () => {})
  let timer: NodeJS.Timeout | undefined
  // The trickle starts once the head is written: on a loaded machine a timer could fire first.
  socket.once('connect', () => {
    if (head !== '') socket.write(head)
    timer = setInterval(() => {
      if (socket.writable && i < trickle.length) socket.write(trickle[i++] as string)
    }, everyMs)
  })
  const done = new Promise<Observed>(resolve => {
    socket.once('close', () => {
      clearInterval(timer)
      const m = /^HTTP\/1\.1 (\d{3})/.exec(received)
      resolve({
        closedAfterMs: performance.now() - started,
        status: m === null ? null : Number(m[1]),
        body: received.split('\r\n\r\n')[1] ?? ''
      })
    })
  })
  return { socket, done }
}

/** Waits for every connection to close, or for `ms`; the ones still open count as never closed. */
async function closedWithin (
  clients: Array<{ socket: Socket, done: Promise<Observed> }>,
  ms: number
): Promise<Observed[]> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<'open'>(resolve => { timer = setTimeout(() => { resolve('open') }, ms) })
  const out = await Promise.all(clients.map(async c => {
    const r = await Promise.race([c.done, deadline])
    if (r !== 'open') return r
    c.socket.destroy()
    return { closedAfterMs: null, status: null }
  }))
  clearTimeout(timer)
  return out
}

t.test('200 trickling bodies, slow headers and a silent connection are closed in time; health keeps answering', async t => {
  const h = await build(t, {
    env: {
      HEADERS_TIMEOUT_MS: String(HEADERS_MS),
      REQUEST_TIMEOUT_MS: String(REQUEST_MS),
      CONNECTION_TIMEOUT_MS: String(IDLE_MS),
      // The body must be read: the per-IP limit of the public operation must not answer first.
      AUTH_RATE_LIMIT_PER_MINUTE: '100000',
      // All 211 come from 127.0.0.1: the per-address connection cap (connection-caps.test.ts) is off here.
      MAX_CONNECTIONS_PER_ADDRESS: '0'
    }
  })
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = h.app.server.address() as AddressInfo
  const body = JSON.stringify({ token: 'x'.repeat(100) })
  const bodyHead = `POST /api/auth/invitation HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`

  const bodies = Array.from({ length: 200 }, () => slowClient(port, bodyHead, body, 250))
  const headers = Array.from({ length: 10 }, () => slowClient(port, '', bodyHead, 250))
  const silent = slowClient(port, '', '', 1_000_000)
  await Promise.all(
    [...bodies, ...headers, silent].map(async c => { if (c.socket.connecting) await once(c.socket, 'connect') })
  )

  // While they are all open, the service answers.
  const health: number[] = []
  for (let i = 0; i < 5; i++) health.push((await fetch(`http://127.0.0.1:${port}/api/health`)).status)
  t.same(health, [200, 200, 200, 200, 200], '/api/health answers while 211 slow connections are open')

  const slack = 2000
  const [b, hd, s] = await Promise.all([
    closedWithin(bodies, REQUEST_MS + CHECK_MS + slack),
    closedWithin(headers, HEADERS_MS + CHECK_MS + slack),
    closedWithin([silent], IDLE_MS + slack)
  ])
  t.equal(
    b.filter(o => o.closedAfterMs === null).length, 0,
    `every trickling body is closed within ${REQUEST_MS + CHECK_MS + slack} ms`
  )
  const other = b.find(o => o.status !== 408)
  t.same(
    [...new Set(b.map(o => o.status))], [408],
    `each is answered 408 before the close${other === undefined ? '' : ` (also: ${JSON.stringify(other)})`}`
  )
  t.match(
    JSON.parse(b[0]?.body ?? '{}'), { code: 'VALIDATION_FAILED', message: /took too long to arrive/ },
    'an ErrorResponse'
  )
  t.ok(Math.min(...b.map(o => o.closedAfterMs ?? 0)) >= REQUEST_MS - 100, 'not before REQUEST_TIMEOUT_MS')
  t.equal(hd.filter(o => o.closedAfterMs === null).length, 0, 'every trickling header block is closed')
  t.ok(hd.every(o => o.status === 408 || o.status === null), 'with 408 or nothing')
  t.not(s[0]?.closedAfterMs, null, 'the silent connection is closed')
  t.equal((await fetch(`http://127.0.0.1:${port}/api/health`)).status, 200, 'and the service still answers')
})
