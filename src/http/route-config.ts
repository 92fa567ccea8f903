import type { FastifyRequest } from 'fastify'

/**
 * Whether the request's operation answers for itself under load (`x-fastify-config: { reportsLoad:
 * true }` in openapi.yaml: GET and HEAD /api/health). The connection caps and load shedding let it
 * through to say why the instance is unavailable. Read only on a refusal's path:
 * request.routeOptions builds an object of twelve fields on each read.
 */
export function reportsLoad (request: FastifyRequest): boolean {
  return (request.routeOptions.config as { reportsLoad?: boolean } | undefined)?.reportsLoad === true
}
