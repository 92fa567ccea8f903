// Type-level checks, run by `npm run typecheck` (not by tap): each `@ts-expect-error` must stay an
// error, so a handler type that stops checking its answers against the contract fails the build.
import type { Handler, OperationReply, ResponseOf, SuccessBody } from '../../handlers/types.js'
import type { components } from '../../src/generated/openapi.js'

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
const same = <A, B>(ok: Equal<A, B>): Equal<A, B> => ok

same<ResponseOf<'postUsersInvite', 200>, components['schemas']['InviteUserResponse']>(true)
same<SuccessBody<'postApiKeys'>, components['schemas']['ApiKeyCreated']>(true)
same<ResponseOf<'deleteUsersUserId', 204>, undefined>(true)

export const rightShape: Handler<'getApiKeys'> = async () => ({ items: [] })
// Without a promise: the body itself (GET /api/health), but never the reply nor nothing, which
// Fastify would warn about (the reply sent twice) or never answer.
export const syncBody: Handler<'getApiKeys'> = () => ({ items: [] })
// @ts-expect-error a reply returned without a promise
export const syncReply: Handler<'getApiKeys'> = (_request, reply) => reply
// @ts-expect-error nothing returned without a promise: the request would hang
export const syncNothing: Handler<'headHealth'> = () => undefined
// @ts-expect-error a field of the wrong type
export const wrongType: Handler<'getApiKeys'> = async () => ({ items: [{ id: 1 }] })
// Not checked: an extra field in a returned literal (a function's inferred return type is not
// "fresh", so TypeScript skips the excess-property check); fast-json-stringify drops it on the wire.
export const extraField: Handler<'getApiKeys'> = async () => ({ items: [], total: 0 })
// @ts-expect-error a required field missing
export const missingField: Handler<'getUsers'> = async () => ({ items: [] })
// @ts-expect-error postApiKeys declares no 200: a returned body would be sent as 200
export const wrongStatus: Handler<'postApiKeys'> = async () => ({
  id: 'k',
  name: 'n',
  prefix: 'wsk_',
  createdBy: null,
  createdAt: '',
  lastUsedAt: null,
  secret: 's'
})

export async function sendChecks (reply: OperationReply<'postApiKeys'>): Promise<void> {
  // @ts-expect-error the 201 body lacks `secret`
  await reply.code(201).send({ id: 'k', name: 'n', prefix: 'wsk_', createdBy: null, createdAt: '', lastUsedAt: null })
  // @ts-expect-error 418 is not a status postApiKeys declares
  await reply.code(418).send({ message: 'teapot' })
}
