import type { FastifyInstance } from 'fastify'
import { errorHandlerOf, notFoundHandlerOf, type ErrorShape } from '../plugins/errors.js'
import { SCIM_MEDIA_TYPE, scimErrorBody } from '../scim/errors.js'
import { registerOperations, type OperationsOptions } from './operations.js'

// SCIM 2.0 (RFC 7644) as a context of its own, registered at each SCIM base path: every answer
// there is in SCIM's media type and every error a SCIM error — the framework's own (validation,
// body size, a path the contract does not list) included — by this context's error and not-found
// handlers, not by looking at the URL.

const SCIM_ERRORS: ErrorShape = { type: SCIM_MEDIA_TYPE, body: scimErrorBody }

export async function scimRoutes (fastify: FastifyInstance, opts: OperationsOptions): Promise<void> {
  fastify.setErrorHandler(errorHandlerOf(fastify, SCIM_ERRORS))
  fastify.setNotFoundHandler(notFoundHandlerOf(SCIM_ERRORS))
  fastify.addHook('preSerialization', (_request, reply, payload, done) => {
    reply.type(SCIM_MEDIA_TYPE)
    done(null, payload)
  })
  await registerOperations(fastify, opts)
}
