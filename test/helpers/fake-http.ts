import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'

// A tiny loopback HTTP server for fakes of third-party APIs (WorkOS, Slack). Tests register
// handlers per "METHOD /path"; every request is recorded so tests can assert what was sent.

export interface FakeRequest {
  method: string,
  path: string,
  query: URLSearchParams,
  headers: IncomingMessage['headers'],
  body: string,
  json: unknown
}
interface FakeReply {
  status?: number,
  json?: unknown,
  text?: string,
  headers?: Record<string, string>,
  delayMs?: number,
  hang?: boolean
}
type FakeHandler = (req: FakeRequest) => FakeReply | Promise<FakeReply>

export interface FakeHttp {
  url: string
  hostname: string
  port: number
  requests: FakeRequest[]
  on(route: string, handler: FakeHandler): void
  close(): Promise<void>
}

export async function startFakeHttp (t: { teardown(fn: () => unknown): void }): Promise<FakeHttp> {
  const routes = new Map<string, FakeHandler>()
  const requests: FakeRequest[] = []
  const open = new Set<ServerResponse>()
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake')
      const body = Buffer.concat(chunks).toString('utf8')
      let json: unknown = null
      try { json = body.length > 0 ? JSON.parse(body) : null } catch {}
      const fr: FakeRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body,
        json
      }
      requests.push(fr)
      const key = `${fr.method} ${fr.path}`
      // A route ending in * matches every path it prefixes.
      const handler = routes.get(key) ??
        [...routes].find(([route]) => route.endsWith('*') && key.startsWith(route.slice(0, -1)))?.[1]
      ;(async () => {
        const reply: FakeReply = handler !== undefined
          ? await handler(fr)
          : {
              status: 404,
              json: { message: `fake: no route for ${fr.method} ${fr.path}` }
            }
        if (reply.hang === true) { open.add(res); return }
        if (reply.delayMs !== undefined) await new Promise(resolve => setTimeout(resolve, reply.delayMs))
        res.writeHead(
          reply.status ?? 200,
          { 'content-type': reply.text !== undefined ? 'text/plain' : 'application/json', ...reply.headers }
        )
        res.end(reply.text ?? JSON.stringify(reply.json ?? {}))
      })().catch(() => { res.destroy() })
    })
  })
  await new Promise<void>(resolve => { server.listen(0, '127.0.0.1', () => { resolve() }) })
  const port = (server.address() as { port: number }).port
  const fake: FakeHttp = {
    url: `http://127.0.0.1:${port}`,
    hostname: '127.0.0.1',
    port,
    requests,
    on (route, handler) { routes.set(route, handler) },
    async close () {
      for (const r of open) r.destroy()
      server.closeAllConnections()
      await new Promise<void>(resolve => { server.close(() => { resolve() }) })
    }
  }
  t.teardown(async () => { await fake.close() })
  return fake
}
