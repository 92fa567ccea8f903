import type { Readable } from 'node:stream'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { operations } from '../src/generated/openapi.js'
import type { Config } from '../src/config.js'
import type { Services } from '../src/services.js'

// Handler types derived from the generated contract types: a missing or misspelled operationId
// in the map is a compile error, and each handler sees its operation's body, query and params.

// The contract's `webhooks` (operationIds `webhook…`) are requests this service sends, not routes it serves.
type OperationId = Exclude<keyof operations, `webhook${string}`>
type Op<K extends OperationId> = operations[K]

// The body's one media type: JSON, or a form for Slack's commands and interactions (app.ts).
type BodyContent<B> = { 'application/json': B } | { 'application/x-www-form-urlencoded': B } |
  { 'application/scim+json': B }
type JsonBody<K extends OperationId> = Op<K> extends { requestBody: { content: BodyContent<infer B> } }
  ? B
  : Op<K> extends { requestBody?: { content: BodyContent<infer B> } } ? B | undefined : undefined
type Query<K extends OperationId> = Op<K> extends {
  parameters: { query?: infer Q }
} ? (Q extends undefined ? Record<string, never> : NonNullable<Q>) : Record<string, never>
type Params<K extends OperationId> = Op<K> extends {
  parameters: { path?: infer P }
} ? (P extends undefined ? Record<string, never> : NonNullable<P>) : Record<string, never>
type Headers<K extends OperationId> = Op<K> extends {
  parameters: { header?: infer H }
} ? (H extends undefined ? Record<string, never> : Partial<NonNullable<H>>) : Record<string, never>

type Responses<K extends OperationId> = Op<K>['responses']
/** The statuses operation K declares (numeric keys only; the contract uses no `default` or `2XX`). */
type StatusOf<K extends OperationId> = Extract<keyof Responses<K>, number>

/**
 * The body operation K declares for status S: the JSON schema's type, `undefined` for a response
 * without content (204, redirects), and raw text or bytes for any other media type (HTML, scripts,
 * an export's stream of lines), which the contract describes only as a string. Distributes over a union of statuses.
 */
export type ResponseOf<K extends OperationId, S extends StatusOf<K>> = S extends unknown
  ? Responses<K>[S] extends { content: { 'application/json': infer B } } ? B
    : Responses<K>[S] extends { content: { 'application/scim+json': infer B } } ? B
      : Responses<K>[S] extends { content?: never } ? undefined
        : string | Buffer | Readable
  : never

/** The bodies of K's declared 2xx answers (a union when it declares more than one). */
export type SuccessBody<K extends OperationId> = ResponseOf<K, Extract<StatusOf<K>, 200 | 201 | 202 | 203 | 204>>

/** Status → declared body, in the shape Fastify's `Reply` generic reads, so `reply.code(s).send(b)` is checked. */
type ReplyMap<K extends OperationId> = { [S in StatusOf<K>]: ResponseOf<K, S> }

type OperationGeneric<K extends OperationId> = {
  Body: JsonBody<K>
  Querystring: Query<K>
  Params: Params<K>
  Headers: Headers<K>
  Reply: ReplyMap<K>
}

type OperationRequest<K extends OperationId> = FastifyRequest<OperationGeneric<K>>
/**
 * The reply of operation K: `code()` accepts only K's declared statuses and `send()` after it only
 * that status's body. Methods that return Fastify's own reply type (`header`, `type`, `redirect`)
 * widen `send()` to the union of K's declared bodies.
 */
export type OperationReply<K extends OperationId> = FastifyReply<OperationGeneric<K>>

type OkBody<K extends OperationId> = ResponseOf<K, Extract<StatusOf<K>, 200>>

/**
 * A handler answers either by returning its operation's 200 body (Fastify sends a returned value
 * with status 200, so an operation without a declared 200 cannot return a body) or by returning
 * the reply it sent through, typed as above. A handler with nothing to wait for may return the
 * body itself, without a promise (GET /api/health): Fastify sends it at once. Not the reply, nor
 * nothing: a handler returning those synchronously would be warned about, or never answer.
 */
export type Handler<K extends OperationId> = (
  request: OperationRequest<K>,
  reply: OperationReply<K>
) => Promise<OkBody<K> | OperationReply<K>> | Exclude<OkBody<K>, undefined>

export type HandlerMap = { [K in OperationId]: Handler<K> }

/** Helper for a group module: the handlers it implements, each typed by its operationId. */
export type HandlerGroup<K extends OperationId> = { [P in K]: Handler<P> }

/** What every handler group is built from (no module singletons). */
export interface HandlerDeps {
  services: Services
  config: Config
  contract: Record<string, unknown>
}
