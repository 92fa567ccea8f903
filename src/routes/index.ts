import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { createHandlers } from '../../handlers/index.js'
import { SCIM_BASE_PATHS } from '../scim/errors.js'
import { contractPart, registerOperations } from './operations.js'
import { scimRoutes } from './scim.js'

// The routes: every operation of the contract, bound to handlers/. The REST API in the app's own
// context (its error and not-found handlers: src/plugins/errors.ts); SCIM in a child context at
// each of its base paths (src/routes/scim.ts).

async function routesPlugin (fastify: FastifyInstance): Promise<void> {
  const { contract } = fastify
  const handlers = createHandlers({ services: fastify.services, config: fastify.config, contract })
  await registerOperations(fastify, { spec: contractPart(contract, { outside: SCIM_BASE_PATHS }), handlers })
  for (const base of SCIM_BASE_PATHS) {
    await fastify.register(scimRoutes, { prefix: base, base, spec: contractPart(contract, { base }), handlers })
  }
}

export default fp(routesPlugin, {
  name: 'routes', fastify: '5.x', dependencies: ['services', 'security', 'contract-lifecycle', 'errors']
})
