import type { Ports } from '../ports/index.js'
import { createHash, randomUUID } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import { Errors, isServiceError, serviceError, type ErrorCode } from '../errors.js'
import {
  checkpointIdempotencyKey, claimIdempotencyKey, completeIdempotencyKey, forgetExpiredIdempotencyKey,
  listSealedIdempotencyKeys, releaseIdempotencyKey, renewIdempotencyKey, resealIdempotencyKey,
  type IdempotencyKeyId, type SealedIdempotencyKey
} from '../db/idempotency-keys.js'
import type { Queryable } from '../db/client.js'
import type { Principal } from '../principal.js'
import { openWith, sealWith } from '../lib/crypto.js'
import { pages, resealStore, type ResealCount } from '../lib/reseal.js'
import { sessionKeyring } from '../lib/secret-keys.js'
import { safeEqual } from '../lib/tokens.js'

// The Idempotency-Key semantics, for any operation whose contract declares the header:
//  - same key + same request → the first answer again (success or client error), the work runs once;
//  - same key + another request → 422 IDEMPOTENCY_KEY_REUSED;
//  - while the first request works → 409 IDEMPOTENCY_KEY_IN_USE. Its claim is a lease that
//    the request renews while it works, so a claim left by a process that died (kill -9) is
//    taken over by a retry once the lease runs out — seconds, not minutes;
//  - a failure (5xx) or a spent budget (429) is not an answer: the key is released, a retry runs;
//  - before a step it cannot undo (an e-mail leaves), the work may record a checkpoint in its own
//    transaction: what a retry needs to finish that same work instead of redoing it. A run that
//    fails after its checkpoint hands it to the retry (`IdempotentAttempt.uncertain`).
// A key is its sender's own: the principal (the person, or the API key — never the person who made
// the key) is part of its identity, so another principal sending the same key runs its own request
// and never receives the first one's answer. Stored answers are sealed (AES-256-GCM, key derived
// from SESSION_SECRET, bound to the key's identity, principal included): they can hold live
// secrets, such as the signup link of an invitation. Keys derived from SESSION_SECRET_PREVIOUS
// still open them (resealIdempotencyAnswers rewrites them).

/**
 * The answers' key is derived from SESSION_SECRET; a claim holds IDEMPOTENCY_LEASE_MS without
 * renewal, renewed every third of it.
 */
export type IdempotencyDeps = Pick<Ports, 'db' | 'clock' | 'log' | 'config'> & {
  /** How long a key is remembered (Stripe: 24 h); after that it may be used afresh. */
  retentionMs: number
}

/** Which key, for which operation: what a request carries (see idempotencyKeyOf). */
export interface IdempotencyKeyOf {
  key: string
  /** The contract's operationId. */
  operation: string
}

/**
 * The request's Idempotency-Key and its operation (the contract's operationId, from the route
 * glue made), or undefined without the header. The contract validates the header (1–255 chars).
 */
export function idempotencyKeyOf (request: FastifyRequest): IdempotencyKeyOf | undefined {
  const key = request.headers['idempotency-key']
  const operation = (request.routeOptions.schema as { operationId?: unknown } | undefined)?.operationId
  if (typeof key !== 'string' || typeof operation !== 'string') return undefined
  return { key, operation }
}

interface IdempotentRequest {
  /** Who sends the key: its workspace, and the person or API key it belongs to. */
  principal: Pick<Principal, 'kind' | 'workspaceId' | 'userId' | 'apiKeyId'>
  /** The contract's operationId. */
  operation: string
  key: string
  /** What "the same request" means: the normalized input, compared by hash. */
  request: unknown
}

/** What one run of a key's work is handed. */
export interface IdempotentAttempt {
  /**
   * The checkpoint an earlier run of this key recorded and never completed (it failed or died
   * after it, so its irreversible step may have happened); null on a first run.
   */
  uncertain: unknown
  /**
   * Record `data` as this run's checkpoint in the caller's transaction `tx`, before the step it
   * cannot undo. Throws IDEMPOTENCY_KEY_IN_USE when this run no longer holds the key (its lease
   * ran out and a retry took it): the transaction must not commit, nothing must follow.
   */
  checkpoint(tx: Queryable, data: unknown): Promise<void>
}

export interface Idempotency {
  /** Runs `work` at most once per key (see above) and answers every retry as the first time. */
  run<T>(req: IdempotentRequest, work: (attempt: IdempotentAttempt) => Promise<T>): Promise<T>
}

interface Answer { status: number, body: unknown }

/** Whose keys: an API key's own (`key:<id>`), or the person's (`user:<id>`) for every other door. */
function keyOwner (p: IdempotentRequest['principal']): string {
  return p.kind === 'apiKey' && p.apiKeyId !== null ? `key:${p.apiKeyId}` : `user:${p.userId}`
}

/** A stored error answer, thrown again as the registry error it was. */
function replayedError ({ status, body }: Answer): Error {
  const b = (body ?? {}) as { message?: unknown, code?: unknown, details?: unknown }
  const err = serviceError(
    typeof b.code === 'string' && Object.hasOwn(Errors, b.code) ? b.code as ErrorCode : 'INTERNAL_ERROR'
  )
  if (typeof b.message === 'string') err.message = b.message
  if (b.details !== null && typeof b.details === 'object') err.details = b.details as Record<string, unknown>
  err.statusCode = status
  return err
}

/** A client error is the final answer for its key; a failure (5xx) or a spent budget (429) is not. */
function finalAnswerOf (err: unknown): Answer | null {
  if (!isServiceError(err) || err.statusCode >= 500 || err.code === 'RATE_LIMITED') return null
  const body: Record<string, unknown> = { message: err.message, code: err.code }
  if (err.details !== undefined) body.details = err.details
  return { status: err.statusCode, body }
}

const answerKeyring = (config: IdempotencyDeps['config']) => sessionKeyring(config, 'idempotency-key answers')
/** What a sealed answer is bound to: the key's identity. */
const answerContext = (id: IdempotencyKeyId) => JSON.stringify([id.workspaceId, id.operation, id.key, id.principal])
// A checkpoint is sealed under its own context: it is never mistaken for an answer.
const checkpointContext = (id: IdempotencyKeyId) => `${answerContext(id)}#checkpoint`

/**
 * Re-seals every stored answer and checkpoint that a previous SESSION_SECRET sealed under the
 * current one (npm run secrets:reencrypt); see src/housekeeping/reencrypt.ts.
 */
export async function resealIdempotencyAnswers (deps: Pick<Ports, 'db' | 'config'>): Promise<ResealCount> {
  return await resealStore({
    store: 'idempotency-key answers',
    ring: answerKeyring(deps.config),
    rows: pages<SealedIdempotencyKey>(async (after, limit) =>
      await listSealedIdempotencyKeys(deps.db, after?.id ?? null, limit)),
    contexts: { response: answerContext, checkpoint: checkpointContext },
    write: async (id, column, from, to) =>
      await resealIdempotencyKey(deps.db, id, column as 'response' | 'checkpoint', from, to)
  })
}

export function createIdempotency (deps: IdempotencyDeps): Idempotency {
  const { db, clock, log } = deps
  const leaseMs = deps.config.idempotencyLeaseMs
  const ring = answerKeyring(deps.config)
  const seal = (id: IdempotencyKeyId, a: Answer) => sealWith(ring, JSON.stringify(a), answerContext(id))
  const open = (id: IdempotencyKeyId, sealed: string) => JSON.parse(openWith(ring, sealed, answerContext(id))) as Answer
  const leaseEnd = () => new Date(clock.now().getTime() + leaseMs)
  const sealCheckpoint = (id: IdempotencyKeyId, data: unknown) =>
    sealWith(ring, JSON.stringify(data) ?? 'null', checkpointContext(id))
  const openCheckpoint = (id: IdempotencyKeyId, sealed: string): unknown =>
    JSON.parse(openWith(ring, sealed, checkpointContext(id)))

  /** Renews the lease every third of it until stopped. */
  function holdLease (id: IdempotencyKeyId, owner: string): () => void {
    const timer = setInterval(() => {
      renewIdempotencyKey(db, id, owner, leaseEnd()).then(held => {
        if (!held) {
          log.warn(
            { operation: id.operation }, 'an Idempotency-Key lease was lost while its request was running'
          )
        }
      }, (err: Error) => { log.warn({ err: err.message }, 'could not renew an Idempotency-Key lease') })
    }, Math.max(100, Math.floor(leaseMs / 3)))
    timer.unref()
    return () => { clearInterval(timer) }
  }

  return {
    async run<T>(req: IdempotentRequest, work: (attempt: IdempotentAttempt) => Promise<T>): Promise<T> {
      const id: IdempotencyKeyId = {
        workspaceId: req.principal.workspaceId,
        principal: keyOwner(req.principal),
        operation: req.operation,
        key: req.key
      }
      const requestHash = createHash('sha256').update(JSON.stringify(req.request) ?? 'null').digest('hex')
      const owner = randomUUID()
      const now = clock.now()
      await forgetExpiredIdempotencyKey(db, id, new Date(now.getTime() - deps.retentionMs))
      const held = await claimIdempotencyKey(db, { ...id, requestHash, owner, lockedUntil: leaseEnd(), now })
      if (!('claimed' in held)) {
        if (!safeEqual(held.requestHash, requestHash)) throw serviceError('IDEMPOTENCY_KEY_REUSED')
        if (held.statusCode === null || held.response === null) throw serviceError('IDEMPOTENCY_KEY_IN_USE')
        const answer = open(id, held.response)
        if (answer.status >= 200 && answer.status < 300) return answer.body as T
        throw replayedError(answer)
      }
      const stop = holdLease(id, owner)
      const attempt: IdempotentAttempt = {
        uncertain: held.checkpoint !== null ? openCheckpoint(id, held.checkpoint) : null,
        async checkpoint (tx, data) {
          if (!await checkpointIdempotencyKey(tx, id, owner, sealCheckpoint(id, data))) {
            throw serviceError('IDEMPOTENCY_KEY_IN_USE')
          }
        }
      }
      let result: T
      try {
        result = await work(attempt)
      } catch (err) {
        const answer = finalAnswerOf(err)
        if (answer !== null) await completeIdempotencyKey(db, id, owner, answer.status, seal(id, answer))
        else {
          await releaseIdempotencyKey(db, id, owner, clock.now()).catch((e: Error) => {
            log.warn(
              { err: e.message }, 'could not release an Idempotency-Key claim'
            )
          })
        }
        throw err
      } finally {
        stop()
      }
      await completeIdempotencyKey(db, id, owner, 200, seal(id, { status: 200, body: result }))
      return result
    }
  }
}
