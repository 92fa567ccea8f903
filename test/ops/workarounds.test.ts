import t, { type Test } from 'tap'
import { Agent, createServer, request, type IncomingMessage, type Server } from 'node:http'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { keepIdleConnectionsOnClose } from '../../src/lib/workarounds/idle-connections-kept.js'

// Each module of src/lib/workarounds/ reaches inside a dependency (Node's own http.Server here).
// These tests hold the behaviour of the dependency it relies on: when an upgrade changes it, they
// fail, and the workaround is taken out or redone — not left to break a documented target silently.

/** A server with one idle keep-alive connection (its first answer read). */
async function serverWithIdleConnection (t: Test): Promise<Server> {
  const server = createServer((_req, res) => { res.end('ok') })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  const agent = new Agent({ keepAlive: true })
  t.teardown(() => { agent.destroy() })
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    request({ port, host: '127.0.0.1', agent }, resolve).on('error', reject).end()
  })
  res.resume()
  await once(res, 'end')
  return server
}

t.test("Node's server.close() calls the server's own closeIdleConnections (idle-connections-kept.ts relies on it)", async t => {
  const server = await serverWithIdleConnection(t)
  let called = 0
  const own = server.closeIdleConnections.bind(server)
  server.closeIdleConnections = () => { called++; own() }
  await new Promise<void>(resolve => { server.close(() => { resolve() }) })
  t.equal(called, 1, 'close() went through the replaceable method')
})

t.test('keepIdleConnectionsOnClose: idle connections stay for the grace, then close; at once for 0', async t => {
  for (const graceMs of [0, 300]) {
    const server = await serverWithIdleConnection(t)
    keepIdleConnectionsOnClose(server, () => graceMs)
    const at = performance.now()
    // 'close' comes once the last connection has closed: the idle one, when the workaround lets it.
    await new Promise<void>(resolve => { server.close(() => { resolve() }) })
    const took = performance.now() - at
    if (graceMs === 0) t.ok(took < 250, `grace 0: closed at once (${Math.round(took)} ms)`)
    else t.ok(took >= graceMs - 20, `grace ${graceMs} ms: the idle connection stayed ${Math.round(took)} ms`)
  }
})
