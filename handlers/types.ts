import type { FastifyReply, FastifyRequest } from 'fastify'
import type { operations } from '../src/generated/openapi.js'
import type { Config } from '../src/config.js'
import type { Services } from '../src/services.js'

// Handler types derived from the generated contract types: a missing or misspelled operationId
// in the map is a compile error, and each handler sees its operation's body, query and params.

export type OperationId = keyof operations
type Op<K extends OperationId> = operations[K]

type JsonBody<K extends OperationId> = Op<K> extends { requestBody: { content: { 'application/json': infer B } } }
  ? B
  : Op<K> extends { requestBody?: { content: { 'application/json': infer B } } } ? B | undefined : undefined
type Query<K extends OperationId> = Op<K> extends { parameters: { query?: infer Q } } ? (Q extends undefined ? Record<string, never> : NonNullable<Q>) : Record<string, never>
type Params<K extends OperationId> = Op<K> extends { parameters: { path?: infer P } } ? (P extends undefined ? Record<string, never> : NonNullable<P>) : Record<string, never>
type Headers<K extends OperationId> = Op<K> extends { parameters: { header?: infer H } } ? (H extends undefined ? Record<string, never> : Partial<NonNullable<H>>) : Record<string, never>

export type OperationRequest<K extends OperationId> = FastifyRequest<{
  Body: JsonBody<K>
  Querystring: Query<K>
  Params: Params<K>
  Headers: Headers<K>
}>

export type Handler<K extends OperationId> = (request: OperationRequest<K>, reply: FastifyReply) => Promise<unknown>

export type HandlerMap = { [K in OperationId]: Handler<K> }

/** Helper for a group module: the handlers it implements, each typed by its operationId. */
export type HandlerGroup<K extends OperationId> = { [P in K]: Handler<P> }

/** What every handler group is built from (no module singletons). */
export interface HandlerDeps {
  services: Services
  config: Config
  contract: Record<string, unknown>
}
