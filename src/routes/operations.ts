import type { FastifyInstance, RouteOptions } from 'fastify'
import glue from 'fastify-openapi-glue'
import type { HandlerMap } from '../../handlers/types.js'

// The contract's operations as routes: fastify-openapi-glue builds one per operation of `spec`,
// and each gets its handler and, from the contract, its security hooks, rate limit and
// deprecation headers (glue merges what operationResolver returns into the route it builds).

export interface OperationsOptions {
  /** The part of the contract to serve, its paths relative to the context's prefix. */
  spec: Record<string, unknown>
  handlers: HandlerMap
  /** The context's prefix: a route's path in the contract is this plus its path in `spec`. */
  base?: string
}

export async function registerOperations (fastify: FastifyInstance, opts: OperationsOptions): Promise<void> {
  const handlers = opts.handlers as unknown as Record<string, (...args: never[]) => unknown>
  const base = opts.base ?? ''
  await fastify.register(glue, {
    specification: opts.spec,
    // glue's type declares a complete RouteOptions, method and url included, which glue supplies.
    operationResolver: (operationId: string, method: string, path: string) => {
      const openapiPath = `${base}${path}`
      const route = fastify.operationRoute(method, openapiPath)
      // The contract's path template names the route in metrics and traces (never the raw URL).
      route.config.contractPath = openapiPath
      const deprecation = fastify.deprecationRoute(method, openapiPath, operationId)
      return { handler: handlers[operationId]?.bind(handlers), ...route, ...deprecation } as unknown as RouteOptions
    }
  })
}

/**
 * The part of a contract under `base` (paths relative to it), or, without a base, the part outside
 * every one of `bases`: a fresh copy each time, since glue may annotate what it is given.
 */
export function contractPart (
  contract: Record<string, unknown>, part: { base: string } | { outside: readonly string[] }
): Record<string, unknown> {
  const paths = contract.paths as Record<string, unknown>
  const under = (path: string, base: string): boolean => path.startsWith(`${base}/`)
  const kept = Object.entries(paths).flatMap(([path, item]): Array<[string, unknown]> => {
    if ('base' in part) return under(path, part.base) ? [[path.slice(part.base.length), item]] : []
    return part.outside.some(base => under(path, base)) ? [] : [[path, item]]
  })
  return structuredClone({ ...contract, paths: Object.fromEntries(kept) })
}
