import { connect, createServer, type Socket } from 'node:net'

// A loopback TCP proxy in front of PostgreSQL (or Redis), to take the peer "down" for one app
// without touching the server other tests share:
// - down():   every connection cut, new ones refused (a stopped server);
// - freeze(): nothing forwarded any more, nothing closed; new connections are accepted and held
//             (a server stopped with SIGSTOP, or a network that drops packets);
// - cut():    every open connection cut, new ones still forwarded (a restarted server);
// - up():     forward again; what a freeze held back is delivered (a thawed server).

export interface TcpProxy {
  port: number
  down(): void
  freeze(): void
  cut(): void
  up(): void
  /** Resolves when the proxy next forwards a new client connection (e.g. a reconnect). */
  connected(): Promise<void>
  close(): Promise<void>
}

export async function startTcpProxy (
  t: { teardown(fn: () => unknown): void },
  target: { host: string, port: number }
): Promise<TcpProxy> {
  let state: 'up' | 'down' | 'frozen' = 'up'
  const pairs = new Set<[Socket, Socket]>()
  let onConnection: Array<() => void> = []
  const held = new Set<Socket>()
  const forward = (client: Socket) => {
    for (const f of onConnection) f()
    onConnection = []
    const upstream = connect(target.port, target.host)
    const pair: [Socket, Socket] = [client, upstream]
    pairs.add(pair)
    const end = () => { client.destroy(); upstream.destroy(); pairs.delete(pair) }
    client.on('error', end).on('close', end)
    upstream.on('error', end).on('close', end)
    client.pipe(upstream).pipe(client)
  }
  const server = createServer(client => {
    if (state === 'down') { client.destroy(); return }
    if (state === 'frozen') {
      held.add(client)
      client.pause()
      client.on('error', () => { client.destroy() }).on('close', () => { held.delete(client) })
      return
    }
    forward(client)
  })
  await new Promise<void>(resolve => { server.listen(0, '127.0.0.1', () => { resolve() }) })
  const cutAll = () => {
    for (const [a, b] of pairs) { a.destroy(); b.destroy() }
    pairs.clear()
    for (const c of held) c.destroy()
    held.clear()
  }
  const proxy: TcpProxy = {
    port: (server.address() as { port: number }).port,
    down () {
      state = 'down'
      cutAll()
    },
    freeze () {
      state = 'frozen'
      // Bytes stay in the sockets' buffers (TCP backs up); nothing is closed.
      for (const [a, b] of pairs) { a.unpipe(b); b.unpipe(a); a.pause(); b.pause() }
    },
    cut () { cutAll() },
    up () {
      const wasFrozen = state === 'frozen'
      state = 'up'
      if (!wasFrozen) return
      for (const [a, b] of pairs) { a.pipe(b); b.pipe(a) }
      for (const c of held) { held.delete(c); c.removeAllListeners('close'); c.removeAllListeners('error'); forward(c) }
    },
    async connected () { await new Promise<void>(resolve => { onConnection.push(resolve) }) },
    async close () {
      proxy.down()
      await new Promise<void>(resolve => { server.close(() => { resolve() }) })
    }
  }
  t.teardown(async () => { await proxy.close() })
  return proxy
}
