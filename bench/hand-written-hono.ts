import { once } from 'node:events'
import { Hono, type Context } from 'hono'
import { serve as listen } from '@hono/node-server'
import type { Logger } from '../src/logger.js'
import { MCP_PATH, serve } from './hand-written-work.js'
import {
  failure, healthAnswer, invite, list, mcp, notFound, observe, requestContext, sessionToken, type Answer
} from './hand-written-operations.js'

// The hand-written baseline on Hono 4 (@hono/node-server): the operations bench/hand-written.ts
// serves on Fastify, each a Hono route calling the same work (bench/hand-written-operations.ts:
// validation, cookie check, SQL, rate limit, logger, headers, metrics). What differs from the
// Fastify baseline is the framework: its router, its Request and Response objects (the Fetch API
// over Node's HTTP server) and its middleware. Started as the Fastify one (bench/hand-written-work.ts).

const app = new Hono<{ Variables: { id: string, log: Logger } }>()
const send = (c: Context, a: Answer): Response => c.body(a.body, a.status as 200, a.headers)

// Each request's id and logger, and its duration in the metrics afterwards (as Fastify's hooks).
app.use(async (c, next) => {
  const started = performance.now()
  const { id, log } = requestContext()
  c.set('id', id)
  c.set('log', log)
  await next()
  observe(c.req.method, c.req.routePath, c.res.status, started)
})

app.get('/api/health', async c => send(c, await healthAnswer()))
app.post('/api/users/invite', async c => {
  const token = sessionToken(c.req.header('cookie'))
  const read = async (): Promise<Buffer> => Buffer.from(await c.req.arrayBuffer())
  return send(c, await invite(token, c.get('id'), c.req.header('content-type'), read))
})
app.get('/api/invitations', async c => {
  const token = sessionToken(c.req.header('cookie'))
  return send(c, await list(token, c.get('id'), c.req.query()))
})
app.post(MCP_PATH, async c => send(c, await mcp(c.req.header('authorization'))))
app.notFound(c => send(c, notFound(c.req.method, c.req.path)))
app.onError((err, c) => send(c, failure(err, c.get('log'))))

await serve(async port => {
  const server = listen({ fetch: app.fetch, port, hostname: '127.0.0.1' })
  await once(server, 'listening')
  return async () => { await new Promise(resolve => { server.close(resolve) }) }
})
