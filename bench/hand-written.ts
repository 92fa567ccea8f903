import { randomUUID } from 'node:crypto'
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify'
import cookie from '@fastify/cookie'
import jwt from '@fastify/jwt'
import rateLimit from '@fastify/rate-limit'
import { errorBody, formatSchemaErrors } from '../src/plugins/errors.js'
import { toServiceError } from '../src/error-response.js'
import { serviceError } from '../src/errors.js'
import { loggerOptions, RequestLogController } from '../src/logger.js'
import { requestCookie } from '../src/http/cookies.js'
import securityHeaders from '../src/plugins/helmet.js'
import metrics from '../src/plugins/metrics.js'
import { sessionJwtOptions } from '../src/plugins/auth.js'
import type { Principal } from '../src/principal.js'
import { SESSION_COOKIE } from '../src/sessions/service.js'
import { createSerializerCompiler, createValidatorCompiler } from '../src/validation.js'
import {
  bearer, config, db, health, listQuery, listQuerySchema, MCP_PATH, schemaOf, serve, services, withSecurityHeaders
} from './hand-written-work.js'

// The baseline the service must keep pace with: the same operations written by hand as a
// Fastify 5 route each, the way one would without a contract — no fastify-openapi-glue, no
// generated handlers, no per-operation hooks built from openapi.yaml. It does the same work:
//  - the same schemas (taken from openapi.yaml, $refs inlined) and the same Ajv/fast-json-stringify
//    compilers (src/validation.ts: same options);
//  - the same cookie JWT check with @fastify/jwt (HS256 pinned, exp/iss/aud/sid required) before
//    the body is read, then the session row and the role;
//  - the same SQL: the service's own domain services (bench/hand-written-work.ts);
//  - the same logger options and level (Fastify's per-request lines only at info), cookies parsed
//    when first read, the same cross-cutting plugins (security headers; metrics when METRICS_PORT
//    is set), request ids from randomUUID, the same error bodies.
// So the ratio service / hand-written Fastify measures the contract-first binding alone. The same
// work on Hono and Express: bench/hand-written-hono.ts, bench/hand-written-express.ts.
// How it is started: bench/hand-written-work.ts.

const errorResponse = schemaOf('ErrorResponse')

const app = Fastify({
  logger: loggerOptions(config.logLevel),
  logController: new RequestLogController(),
  genReqId: () => randomUUID(),
  schemaErrorFormatter: formatSchemaErrors,
  exposeHeadRoutes: false
})
app.setValidatorCompiler(createValidatorCompiler())
app.setSerializerCompiler(createSerializerCompiler())
if (withSecurityHeaders) await app.register(securityHeaders, { config })
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

app.get('/api/health', { schema: { response: { 200: schemaOf('Health') } } }, health)

app.post('/api/users/invite', {
  schema: {
    body: schemaOf('InviteUserRequest'),
    response: { 200: schemaOf('InviteUserResponse'), '4xx': errorResponse, '5xx': errorResponse }
  },
  onRequest: sessionToken,
  preHandler: adminSession
}, async request => await services.invitations.invite(admin(request), request.body as never))

app.get('/api/invitations', {
  schema: { querystring: listQuerySchema, response: { 200: schemaOf('InvitationList'), '4xx': errorResponse } },
  onRequest: sessionToken,
  preHandler: adminSession
}, async request => await services.invitations.list(admin(request), listQuery(request.query as never)))

// MCP: only its door is measured (the API key, then its rate limit answering 429); a request the
// limit lets through is answered 503, as this baseline carries no MCP server.
app.post(MCP_PATH, {
  onRequest: async (request: FastifyRequest) => {
    const secret = bearer(request.headers.authorization)
    const principal = secret === null ? null : await services.security.authenticateApiKey(secret)
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

await serve(async port => {
  await app.listen({ port, host: '127.0.0.1' })
  return async () => { await app.close() }
})
