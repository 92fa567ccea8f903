import express, { type NextFunction, type Request, type Response } from 'express'
import type { Logger } from '../src/logger.js'
import { MCP_PATH, serve } from './hand-written-work.js'
import {
  failure, healthAnswer, invite, list, mcp, notFound, observe, requestContext, sessionToken, type Answer
} from './hand-written-operations.js'

// The hand-written baseline on Express 5: the operations bench/hand-written.ts serves on Fastify,
// each an Express route calling the same work (bench/hand-written-operations.ts: validation, cookie
// check, SQL, rate limit, logger, headers, metrics). What differs from the Fastify baseline is the
// framework: its router, its request and response objects and its middleware (the body read by
// express.raw). Express's own additions the service does not make are off: the ETag of each body
// (a hash of every answer) and X-Powered-By. Started as the Fastify one (bench/hand-written-work.ts).

interface Locals { id: string, log: Logger, token: string }
const app = express()
app.disable('etag')
app.disable('x-powered-by')
const send = (res: Response, a: Answer): void => { res.status(a.status).set(a.headers).send(a.body) }
const locals = (res: Response): Locals => res.locals as Locals

// Each request's id and logger, and its duration in the metrics once answered (as Fastify's hooks).
app.use((req: Request, res: Response, next: NextFunction) => {
  const started = performance.now()
  const { id, log } = requestContext()
  Object.assign(res.locals, { id, log })
  res.once('finish', () => {
    observe(req.method, (req.route as { path?: string } | undefined)?.path ?? '*', res.statusCode, started)
  })
  next()
})
/** The session cookie, checked before the body is read. */
const session = (req: Request, res: Response, next: NextFunction): void => {
  locals(res).token = sessionToken(req.headers.cookie)
  next()
}
// The Fastify baseline's body limit (Fastify's default, 1 MiB).
const body = express.raw({ type: 'application/json', limit: 1_048_576 })

app.get('/api/health', async (_req, res) => { send(res, await healthAnswer()) })
app.post('/api/users/invite', session, body, async (req, res) => {
  const { token, id } = locals(res)
  send(res, await invite(token, id, req.headers['content-type'], async () => req.body as Buffer))
})
app.get('/api/invitations', session, async (req, res) => {
  send(res, await list(locals(res).token, locals(res).id, req.query))
})
app.post(MCP_PATH, async (req, res) => { send(res, await mcp(req.headers.authorization)) })
app.use((req: Request, res: Response) => { send(res, notFound(req.method, req.path)) })
// Express 5 hands a handler's rejected promise, and a middleware's throw, to its error middleware.
app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
  send(res, failure(err, locals(res).log))
})

await serve(async port => {
  const server = await new Promise<ReturnType<typeof app.listen>>((resolve, reject) => {
    const s = app.listen(port, '127.0.0.1', err => { if (err !== undefined) reject(err); else resolve(s) })
  })
  return async () => { await new Promise(resolve => { server.close(resolve) }) }
})
