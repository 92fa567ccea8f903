import { connect, createServer, type Socket } from 'node:net'

// A loopback TCP proxy in front of PostgreSQL, to take the database "down" for one app
// without touching the server other tests share: down() cuts every connection and refuses new
// ones; up() forwards again.

export interface TcpProxy {
  port: number
  down(): void
  up(): void
  /** Resolves when the proxy next forwards a new client connection (e.g. a reconnect). */
  connected(): Promise<void>
  close(): Promise<void>
}

export async function startTcpProxy (t: { teardown(fn: () => unknown): void }, target: { host: string, port: number }): Promise<TcpProxy> {
  let isUp = true
  const pairs = new Set<[Socket, Socket]>()
  let onConnection: Array<() => void> = []
  const server = createServer(client => {
    if (!isUp) { client.destroy(); return }
    for (const f of onConnection) f()
    onConnection = []
    const upstream = connect(target.port, target.host)
    const pair: [Socket, Socket] = [client, upstream]
    pairs.add(pair)
    const end = () => { client.destroy(); upstream.destroy(); pairs.delete(pair) }
    client.on('error', end).on('close', end)
    upstream.on('error', end).on('close', end)
    client.pipe(upstream).pipe(client)
  })
  await new Promise<void>(resolve => { server.listen(0, '127.0.0.1', () => { resolve() }) })
  const proxy: TcpProxy = {
    port: (server.address() as { port: number }).port,
    down () {
      isUp = false
      for (const [a, b] of pairs) { a.destroy(); b.destroy() }
      pairs.clear()
    },
    up () { isUp = true },
    async connected () { await new Promise<void>(resolve => { onConnection.push(resolve) }) },
    async close () {
      proxy.down()
      await new Promise<void>(resolve => { server.close(() => { resolve() }) })
    }
  }
  t.teardown(async () => { await proxy.close() })
  return proxy
}
