import t from 'tap'
import { connect, type AddressInfo, type Socket } from 'node:net'
import { once } from 'node:events'
import { request as httpRequest } from 'node:http'
import { Writable } from 'node:stream'
import { build } from '../helpers/build.js'
import { loggerOptions } from '../../src/logger.js'

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
  let status: number | string = 0
  for (let i = 0; i < 50 && status !== 200; i++) {
    status = await health(port, '127.0.0.2')
    if (status !== 200) await new Promise(resolve => setTimeout(resolve, 100))
  }
  t.equal(status, 200, 'once its sockets are gone, the same address is served again')
})

t.test('the global cap: past MAX_CONNECTIONS a new connection is closed, logged; served again below it', async t => {
  const { port, sockets, logs } = await start(t, { MAX_CONNECTIONS_PER_ADDRESS: '4', MAX_CONNECTIONS: '12' })
  for (let a = 10; a < 13; a++) for (let i = 0; i < 4; i++) sockets.push(await idleSocket(port, `127.0.0.${a}`))
  t.ok(await closedByServer(port, '127.0.0.20'), 'the 13th connection (another address) is closed')
  t.match(logs(), /connection cap reached \(MAX_CONNECTIONS\)/)
  sockets.shift()?.destroy()
  let status: number | string = 0
  for (let i = 0; i < 50 && status !== 200; i++) {
    status = await health(port, '127.0.0.21')
    if (status !== 200) await new Promise(resolve => setTimeout(resolve, 100))
  }
  t.equal(status, 200, 'below the cap again, /api/health answers')
})
