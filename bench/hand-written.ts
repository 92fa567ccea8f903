import { randomUUID, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify'
import cookie from '@fastify/cookie'
import jwt from '@fastify/jwt'
import rateLimit from '@fastify/rate-limit'
import { parse as parseYaml } from 'yaml'
import { buildApp } from '../src/app.js'
import { keepTickShape } from '../src/lib/tick-shape.js'
import { loadConfig } from '../src/config.js'
import { insertUser } from '../src/db/users.js'
import { insertWorkspace } from '../src/db/workspaces.js'
import { errorBody, formatSchemaErrors } from '../src/plugins/errors.js'
import { toServiceError } from '../src/error-response.js'
import { serviceError } from '../src/errors.js'
import { deferChildLoggers, loggerOptions, RequestLogController } from '../src/logger.js'
import { requestCookie } from '../src/http/cookies.js'
import { contractPath, projectRoot } from '../src/paths.js'
import securityHeaders from '../src/plugins/helmet.js'
import metrics from '../src/plugins/metrics.js'
import { sessionJwtOptions } from '../src/plugins/auth.js'
import type { Principal } from '../src/principal.js'
import { SESSION_COOKIE } from '../src/sessions/service.js'
import { createSerializerCompiler, createValidatorCompiler } from '../src/validation.js'
import { seedWorkspaceInvitations } from './seed.js'
import { apiKeyScopes } from '../src/generated/api-key-scopes.js'

// The baseline the service must not be slower than: the same operations written by hand as a
// Fastify 5 route each, the way one would without a contract — no fastify-openapi-glue, no
// generated handlers, no per-operation hooks built from openapi.yaml. It does the same work:
//  - the same schemas (taken from openapi.yaml, $refs inlined) and the same Ajv/fast-json-stringify
//    compilers (src/validation.ts: same options);
//  - the same cookie JWT check with @fastify/jwt (HS256 pinned, exp/iss/aud/sid required) before
//    the body is read, then the session row and the role;
//  - the same SQL: the service's own domain services (sessions, invitations, API keys) built by
//    buildApp from the same environment (that app never listens);
//  - the same logger options and level, the same logger devices (a request's child made on its
//    first line, Fastify's per-request lines only at info), cookies parsed when first read, the
//    same cross-cutting plugins (security headers; metrics when METRICS_PORT is set), request
//    ids from randomUUID, the same error bodies.
// So the ratio service / hand-written measures the contract-first binding alone.
//
//   (forked by bench/servers.ts) tsx bench/hand-written.ts --port N --invitations N [--no-security-headers]
// Environment: the service's (DATA_DIR / DATABASE_URL, SMTP_URL, SESSION_SECRET, LOG_LEVEL …).
// Sends {type:'ready', cookie, apiKey} once it listens, with an admin's session cookie and an
// API key of its own workspace (seeded with --invitations invitations for the list page).

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    invitations: { type: 'string', default: '0' },
    // `--costs`: what the security headers cost, measured on this server with and without them.
    'no-security-headers': { type: 'boolean', default: false }
  },
  strict: true
})

// As src/server.ts does first: without it, this baseline would pay for Node's tick objects through
// V8's runtime on PGlite, and the service would look faster than it is (src/lib/tick-shape.ts).
keepTickShape()
const config = loadConfig(process.env, { root: projectRoot })
const base = await buildApp({ config, logger: false })
await base.ready()
const { services, db } = base

// The contract's schemas with every local $ref inlined: what one would paste into a route by hand.
const contract = parseYaml(readFileSync(contractPath, 'utf8')) as Record<string, unknown>
function inline (node: unknown): unknown {
  if (Array.isArray(node)) return node.map(inline)
  if (node === null || typeof node !== 'object') return node
  const ref = (node as { $ref?: string }).$ref
  if (ref !== undefined) {
    const target = ref.slice(2).split('/').reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], contract)
    return inline(target)
  }
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, inline(v)]))
}
const schemaOf = (name: string) => inline({ $ref: `#/components/schemas/${name}` }) as Record<string, unknown>
const errorResponse = schemaOf('ErrorResponse')

const app = Fastify({
  logger: loggerOptions(config.logLevel),
  logController: new RequestLogController(),
  genReqId: () => randomUUID(),
  schemaErrorFormatter: formatSchemaErrors,
  exposeHeadRoutes: false
})
deferChildLoggers(app)
app.setValidatorCompiler(createValidatorCompiler())
app.setSerializerCompiler(createSerializerCompiler())
if (!values['no-security-headers']) await app.register(securityHeaders, { config })
await app.register(metrics, { config, poolStats: () => db.poolStats() })
await app.register(cookie, { hook: false })
await app.register(jwt, sessionJwtOptions(config))
await app.register(rateLimit, { global: false })

app.setErrorHandler(async (err, request, reply) => {
  const { error } = toServiceError(err)
  if (error.statusCode >= 500) request.log.error({ err }, error.message)
  if (error.headers !== undefined) reply.headers(error.headers)
  return await reply.code(error.statusCode).send(errorBody(error))
})
app.setNotFoundHandler(async (request, reply) => {
  const path = request.url.split('?')[0] ?? '/'
  return await reply.code(404).send(errorBody(serviceError('NOT_FOUND', [`${request.method} ${path}`])))
})

declare module 'fastify' {
  interface FastifyRequest { admin: Principal | null }
}
app.decorateRequest('admin', null)

/** onRequest: a cookie this service signed and not expired, or 401 before the body is read. */
async function sessionToken (request: FastifyRequest): Promise<void> {
  const token = requestCookie(request, SESSION_COOKIE)
  if (token === undefined || token === '') throw serviceError('UNAUTHENTICATED')
  try { app.jwt.verify(token) } catch { throw serviceError('UNAUTHENTICATED') }
}
/** preHandler: the session row, then the admin role. */
async function adminSession (request: FastifyRequest): Promise<void> {
  const principal = await services.sessions.authenticate(requestCookie(request, SESSION_COOKIE) as string)
  if (principal === null) throw serviceError('UNAUTHENTICATED')
  if (principal.role !== 'admin') throw serviceError('FORBIDDEN', ['admin'])
  request.admin = { ...principal, requestId: request.id }
}
const admin = (request: FastifyRequest): Principal => request.admin as Principal

// Health: a database ping shared by concurrent checks and reused for HEALTH_CACHE_MS, as the service does.
let okUntil = 0
let latencyMs = 0
app.get('/api/health', { schema: { response: { 200: schemaOf('Health') } } }, async () => {
  if (performance.now() >= okUntil) {
    const t0 = performance.now()
    await db.ping()
    latencyMs = Math.round((performance.now() - t0) * 100) / 100
    okUntil = performance.now() + config.healthCacheMs
  }
  return { status: 'ok', version: config.version, checks: { database: { status: 'ok', kind: db.kind, latencyMs } } }
})

app.post('/api/users/invite', {
  schema: {
    body: schemaOf('InviteUserRequest'),
    response: { 200: schemaOf('InviteUserResponse'), '4xx': errorResponse, '5xx': errorResponse }
  },
  onRequest: sessionToken,
  preHandler: adminSession
}, async request => await services.invitations.invite(admin(request), request.body as never))

const listQuery = {
  type: 'object',
  properties: {
    status: schemaOf('InvitationStatus'),
    limit: inline({ $ref: '#/components/parameters/Limit' }) as { schema: unknown },
    cursor: inline({ $ref: '#/components/parameters/Cursor' }) as { schema: unknown }
  },
  additionalProperties: false
}
listQuery.properties.limit = listQuery.properties.limit.schema as never
listQuery.properties.cursor = listQuery.properties.cursor.schema as never
app.get('/api/invitations', {
  schema: { querystring: listQuery, response: { 200: schemaOf('InvitationList'), '4xx': errorResponse } },
  onRequest: sessionToken,
  preHandler: adminSession
}, async request => {
  const q = request.query as { status?: 'pending', limit?: number, cursor?: string }
  return await services.invitations.list(admin(request), {
    limit: q.limit ?? 50,
    ...(q.status !== undefined ? { status: q.status } : {}),
    ...(q.cursor !== undefined ? { cursor: q.cursor } : {})
  })
})

// MCP: only its door is measured (the API key, then its rate limit answering 429); a request the
// limit lets through is answered 503, as this baseline carries no MCP server.
app.post('/api/mcp', {
  onRequest: async (request: FastifyRequest) => {
    const m = /^Bearer ([\x21-\x7e]{1,200})$/i.exec(request.headers.authorization ?? '')
    const principal = m === null ? null : await services.security.authenticateApiKey(m[1] as string)
    if (principal === null) throw serviceError('UNAUTHENTICATED')
    request.admin = principal
  },
  config: {
    rateLimit: {
      max: config.rateLimit.apiKeyPerMinute,
      timeWindow: 60_000,
      hook: 'onRequest',
      keyGenerator: (r: FastifyRequest) => `key:${r.admin?.apiKeyId ?? r.ip}`,
      errorResponseBuilder: (_r: unknown, ctx: { ttl: number }) =>
        serviceError('RATE_LIMITED', [Math.max(1, Math.ceil(ctx.ttl / 1000))])
    }
  }
}, async (_request, reply: FastifyReply) => await reply.code(503).send(errorBody(serviceError('SERVICE_UNAVAILABLE'))))

// An admin with a session and an API key, in a workspace of its own holding `--invitations` invitations.
const now = new Date()
const workspace = await insertWorkspace(db, { name: 'Hand-written bench', now })
const user = await insertUser(db, {
  workspaceId: workspace.id,
  email: `hand-${randomBytes(4).toString('hex')}@bench.test`,
  name: 'Hand',
  role: 'admin',
  now
})
const { token } = await services.sessions.start(db, user.id, 'signup')
const principal = await services.sessions.authenticate(token)
if (principal === null) throw new Error('hand-written: the session does not authenticate')
const key = await services.apiKeys.create(principal, { name: 'bench', scopes: apiKeyScopes.map(s => s.scope) })
await seedWorkspaceInvitations(db, workspace.id, Number(values.invitations))

await app.listen({ port: Number(values.port), host: '127.0.0.1' })
const close = async (): Promise<void> => { await app.close(); await base.close(); process.exit(0) }
const closeOnce = (): void => {
  close().catch((err: Error) => { process.stderr.write(`${err.message}\n`); process.exit(1) })
}
process.on('SIGTERM', closeOnce)
process.on('message', (m: { type: string }) => { if (m.type === 'stop') closeOnce() })
process.send?.({ type: 'ready', cookie: `${SESSION_COOKIE}=${token}`, apiKey: key.secret })
