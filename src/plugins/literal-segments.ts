import type { FastifyRequest } from 'fastify'
import { serviceError } from '../errors.js'

// A literal segment beside a template: `GET /api/invitations/batch` reaches the route of
// `/api/invitations/{invitationId}` (the router's GET tree has no `batch`, only the parameter), and
// would answer the id's format error, 400. But `batch` names another path of the contract, not an
// invitation: the request is for a method that path lacks, answered as any undeclared route is
// (404 NOT_FOUND "GET /api/invitations/batch not found", the not-found handler's words). The
// guard runs first of a route's onRequest hooks, before authentication, so the answer does not
// depend on who asks.

const isTemplate = (segment: string): boolean => segment.startsWith('{') && segment.endsWith('}')

/**
 * For each path parameter of `openapiPath`, the literal segments other paths of the contract declare
 * in its place after the same prefix (`/api/invitations/{invitationId}`: invitationId → batch, funnel).
 */
function shadowedLiterals (paths: readonly string[], openapiPath: string): Map<string, Set<string>> {
  const segments = openapiPath.split('/')
  const out = new Map<string, Set<string>>()
  segments.forEach((segment, i) => {
    if (!isTemplate(segment)) return
    const name = segment.slice(1, -1)
    for (const other of paths) {
      const theirs = other.split('/')
      const literal = theirs[i]
      if (literal === undefined || isTemplate(literal)) continue
      const samePrefix = segments.slice(0, i).every((s, j) => {
        const t = theirs[j] as string
        return s === t || isTemplate(s) || isTemplate(t)
      })
      if (!samePrefix) continue
      const set = out.get(name) ?? new Set<string>()
      set.add(literal)
      out.set(name, set)
    }
  })
  return out
}

/** The route's hook answering 404 for a parameter that is one of its shadowed literals; null: none. */
export function literalSegmentGuard (paths: readonly string[], openapiPath: string) {
  const shadowed = shadowedLiterals(paths, openapiPath)
  if (shadowed.size === 0) return null
  return async function literalSegment (request: FastifyRequest): Promise<void> {
    const params = request.params as Record<string, string | undefined>
    for (const [name, literals] of shadowed) {
      const value = params[name]
      if (value !== undefined && literals.has(value)) {
        throw serviceError('NOT_FOUND', [`${request.method} ${request.url.split('?')[0] ?? '/'}`])
      }
    }
  }
}
