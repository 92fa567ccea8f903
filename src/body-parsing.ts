import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest, preValidationAsyncHookHandler } from 'fastify'
import { serviceError, type ServiceError } from './errors.js'
import { parseJsonBody } from './json-body.js'

// How request bodies are read, route by route from the contract: JSON (and Slack's forms where the
// contract says so), nothing else, and a body only where the operation declares one.

/** 415; an image operation (the workspace's logo, `imageBody: true`) names the types it takes. */
function unsupported (request: FastifyRequest): ServiceError {
  return (request.routeOptions.config as { imageBody?: boolean } | undefined)?.imageBody === true
    ? serviceError('LOGO_TYPE_UNSUPPORTED', [request.headers['content-type'] ?? 'no type'])
    : serviceError('UNSUPPORTED_MEDIA_TYPE')
}

/** The content-type parsers and the per-route body rules, registered before the routes. */
async function bodyParsing (app: FastifyInstance): Promise<void> {
  // Bodies: JSON only (text/plain is removed, so it gets 415 instead of skipping the schema).
  // Operations that need the raw bytes (Slack's signature) say `rawBody: true` in the contract.
  app.removeContentTypeParser(['application/json', 'text/plain'])
  // Operations without a request body in the contract ignore whatever body is sent, of any type;
  // operations with one accept JSON only (anything else: 415) and require it (absent: 400).
  const takesBody = (
    request: { routeOptions: { schema?: { body?: unknown } } }
  ) => request.routeOptions.schema?.body !== undefined
  app.addContentTypeParser('*', (request, _payload, done) => {
    done(takesBody(request) ? unsupported(request) : null, undefined)
  })
  // Route by route, once, what would otherwise be worked out on every request:
  //  - "body is required" is a preValidation hook of the operations with a request body only
  //    (an operation without one runs no hook for it);
  //  - a status whose contract declares one media type, JSON or SCIM's, gets its serializer as
  //    the status's own (Fastify otherwise parses each reply's Content-Type to pick it by media type).
  const bodyRequired: preValidationAsyncHookHandler = async request => {
    if (request.body === undefined) {
      throw serviceError(
        'VALIDATION_FAILED', ['body is required'], { errors: [{ in: 'body', field: '', message: 'is required' }] }
      )
    }
  }
  app.addHook('onRoute', route => {
    const optional = (route.config as { bodyOptional?: boolean } | undefined)?.bodyOptional === true
    if (route.schema?.body !== undefined && !optional) {
      route.preValidation = [bodyRequired, ...[route.preValidation ?? []].flat()]
    }
    type Answer = { content?: Record<string, { schema?: unknown }> }
    const response = route.schema?.response as Record<string, Answer> | undefined
    for (const [status, answer] of Object.entries(response ?? {})) {
      const types = Object.keys(answer.content ?? {})
      const json = (answer.content?.['application/json'] ?? answer.content?.['application/scim+json'])?.schema
      if (types.length === 1 && json !== undefined && response !== undefined) response[status] = json as never
    }
  })
  const routeConfig = (request: { routeOptions: { config: unknown } }) =>
    (request.routeOptions.config ?? {}) as {
      rawBody?: boolean, formBody?: boolean, bodyTypes?: string[], imageBody?: boolean
    }
  // Images as bytes for the operations whose contract says `imageBody: true`; what they are is
  // checked by their content there (src/workspaces/logo.ts), SVG included so that it is refused in words.
  app.addContentTypeParser(['image/png', 'image/jpeg', 'image/webp', 'image/svg+xml'], { parseAs: 'buffer' },
    (request, body, done) => {
      if (!takesBody(request)) done(null, undefined)
      else if (routeConfig(request).imageBody !== true) done(serviceError('UNSUPPORTED_MEDIA_TYPE'), undefined)
      else done(null, body)
    })
  // SCIM's own media type (RFC 7644 §3.1), for the operations whose contract declares it only.
  app.addContentTypeParser('application/scim+json', { parseAs: 'buffer' }, (request, body, done) => {
    if (!takesBody(request)) {
      done(null, undefined)
      return
    }
    if (routeConfig(request).bodyTypes?.includes('application/scim+json') !== true) {
      done(serviceError('UNSUPPORTED_MEDIA_TYPE'), undefined)
      return
    }
    try {
      done(null, parseJsonBody(body as Buffer))
    } catch (err) {
      done(err as Error, undefined)
    }
  })
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    if (!takesBody(request)) {
      done(null, undefined)
      return
    }
    // Form operations (Slack's commands and interactions) take their one media type only; images theirs.
    if (routeConfig(request).formBody === true || routeConfig(request).imageBody === true) {
      done(unsupported(request), undefined)
      return
    }
    if (routeConfig(request).rawBody === true) {
      request.rawBody = body as Buffer
    }
    let parsed: unknown
    try {
      parsed = parseJsonBody(body as Buffer)
    } catch (err) {
      done(err as Error, undefined)
      return
    }
    done(null, parsed)
  })
  // Form bodies only for the operations whose contract says `formBody: true` (Slack posts its
  // commands and interactions so); elsewhere a form is 415, so a cross-site HTML form cannot
  // drive a JSON operation. Fields become strings (a repeated field: its last value).
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, (request, body, done) => {
    if (!takesBody(request) || routeConfig(request).formBody !== true) {
      done(takesBody(request) ? unsupported(request) : null, undefined)
      return
    }
    if (routeConfig(request).rawBody === true) request.rawBody = body as Buffer
    done(null, Object.fromEntries(new URLSearchParams((body as Buffer).toString('utf8'))))
  })
  app.decorateRequest('rawBody', null)
  // Response-only media types in the contract: glue warns unless a parser is registered by name.
  for (const type of [
    'text/html', 'text/css', 'text/event-stream', 'application/javascript', 'application/samlmetadata+xml'
  ]) {
    app.addContentTypeParser(type, (request, _payload, done) => {
      done(takesBody(request) ? unsupported(request) : null, undefined)
    })
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The body's bytes, only for operations whose contract config says `rawBody: true`. */
    rawBody: Buffer | null
  }
}

export default fp(bodyParsing, { name: 'body-parsing', fastify: '5.x' })
