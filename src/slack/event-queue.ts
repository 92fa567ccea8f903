import type { Clock } from '../clock.js'
import type { Database } from '../db/client.js'
import type { Logger } from '../logger.js'
import { serviceError } from '../errors.js'
import { jsonbSafe } from '../lib/jsonb-safe.js'
import {
  claimChatEvent, finishChatEvent, insertChatEvent, listClaimableChatEvents, type ChatEventStatus
} from '../db/chat-events.js'

// Durable intake of Slack events: an event is recorded (deduplicated by event_id) before it is
// acknowledged, and processed afterwards by one in-process worker in arrival order. Rows still
// 'received' are picked up again on start-up and by a periodic sweep, so an event that was
// acknowledged is never lost to a restart; a claim is a lease, so another instance's dead
// worker does not hold an event for ever.

/** A claimed event whose worker died is claimable again after this long. */
const CLAIM_LEASE_MS = 2 * 60_000
const SWEEP_INTERVAL_MS = 60_000
const SWEEP_BATCH = 500
/**
 * Levels of arrays and objects a payload may nest (Slack's deepest, rich text in Block Kit, uses
 * about a dozen); deeper ones are refused with a 400 rather than stored and walked.
 */
const MAX_PAYLOAD_DEPTH = 64

export interface SlackEnvelope {
  type: string
  team_id?: string
  event_id?: string
  event?: Record<string, unknown>
  [key: string]: unknown
}

/** How processing an event ended, as recorded on its row. */
export type Outcome = { status: Exclude<ChatEventStatus, 'received'>, error?: string }

/** A non-empty string, or null. */
export const str = (v: unknown): string | null => typeof v === 'string' && v !== '' ? v : null

export interface EventQueue {
  /** Record an event_callback durably; processing follows the acknowledgement. */
  receive(envelope: SlackEnvelope, meta: { retryNum?: string | undefined }): Promise<{ recorded: boolean }>
  /** Resolves when the queue is empty (tests, shutdown). */
  whenIdle(): Promise<void>
  close(): Promise<void>
}

export interface EventQueueDeps {
  db: Database
  clock: Clock
  log: Logger
  /** Handles one event; a throw is recorded as 'failed' with `describeError`'s note. */
  process(envelope: SlackEnvelope): Promise<Outcome>
  /** What a processing failure is recorded (and logged) as; 'internal error' by default. */
  describeError?(err: unknown): string | null
  /** Sweep on start and periodically (only when the app is configured). */
  sweep: boolean
}

/** One worker over the chat_events table; state is only what is queued in this process. */
class SlackEventQueue implements EventQueue {
  readonly #deps: EventQueueDeps
  readonly #pending: string[] = []
  readonly #queued = new Set<string>()
  #running: Promise<void> | null = null
  #sweeping: Promise<void> | null = null
  #closed = false
  #timer: NodeJS.Timeout | undefined

  constructor (deps: EventQueueDeps) {
    this.#deps = deps
    if (deps.sweep) {
      // sweep() catches and logs its own errors.
      this.#sweep().catch(() => {})
      this.#timer = setInterval(() => { this.#sweep().catch(() => {}) }, SWEEP_INTERVAL_MS)
      this.#timer.unref()
    }
  }

  async receive (envelope: SlackEnvelope, meta: { retryNum?: string | undefined }): Promise<{ recorded: boolean }> {
    const { db, clock, log } = this.#deps
    const eventId = str(envelope.event_id)
    const event = envelope.event
    if (eventId === null || typeof event !== 'object' || event === null) {
      throw serviceError('VALIDATION_FAILED', ['an event_callback needs event_id and event'], {
        errors: [
          { in: 'body', field: eventId === null ? 'event_id' : 'event', message: 'is required for event_callback' }
        ]
      })
    }
    // The legacy verification token is a shared secret: it is not kept.
    const { token: _legacyToken, ...payload } = envelope
    // Whatever a signed request carries is kept: characters jsonb refuses are replaced in the
    // stored copy and the exact payload is kept beside it as JSON text, which the worker reads.
    const safe = jsonbSafe(payload, MAX_PAYLOAD_DEPTH)
    if (!safe.ok) {
      log.warn({ eventId, maxDepth: MAX_PAYLOAD_DEPTH },
        'slack: payload nested too deeply, refused')
      throw serviceError('VALIDATION_FAILED', [`the payload nests deeper than ${MAX_PAYLOAD_DEPTH} levels`], {
        errors: [{ in: 'body', field: '', message: `nests deeper than ${MAX_PAYLOAD_DEPTH} levels` }]
      })
    }
    const stored = safe.value as SlackEnvelope
    const storedId = str(stored.event_id) ?? eventId
    const recorded = await insertChatEvent(db, {
      eventId: storedId,
      teamId: str(stored.team_id),
      type: str(stored.event?.type) ?? 'unknown',
      payload: stored,
      payloadText: safe.changed ? JSON.stringify(payload) : null,
      now: clock.now()
    })
    if (recorded) {
      this.#enqueue(storedId)
    } else {
      log.debug({ eventId, retryNum: meta.retryNum }, 'slack: duplicate event acknowledged, not processed again')
    }
    return { recorded }
  }

  async whenIdle (): Promise<void> {
    // A sweep may enqueue work and work may finish before the next sweep: wait until both rest.
    for (let busy = this.#sweeping ?? this.#running; busy !== null; busy = this.#sweeping ?? this.#running) await busy
  }

  async close (): Promise<void> {
    this.#closed = true
    clearInterval(this.#timer)
    // In-flight work finishes; events not yet started stay 'received' for the next start.
    await this.#sweeping
    await this.#running
  }

  #enqueue (eventId: string): void {
    if (this.#closed || this.#queued.has(eventId)) return
    this.#queued.add(eventId)
    this.#pending.push(eventId)
    this.#running ??= this.#drain()
  }

  async #drain (): Promise<void> {
    try {
      let eventId: string | undefined
      // Once closing, the rest stays 'received' in the database for the next start.
      while ((eventId = this.#closed ? undefined : this.#pending.shift()) !== undefined) {
        try {
          await this.#processOne(eventId)
        } catch (err) {
          // Database trouble while claiming or finishing: the row stays 'received' for a sweep.
          this.#deps.log.error({ err, eventId }, 'slack: processing an event failed')
        } finally {
          this.#queued.delete(eventId)
        }
      }
    } finally {
      this.#running = null
    }
  }

  async #processOne (eventId: string): Promise<void> {
    const { db, clock, log } = this.#deps
    const row = await claimChatEvent(db, eventId, clock.now(), CLAIM_LEASE_MS)
    if (row === null) return // done already, or another instance holds it
    let outcome: Outcome
    try {
      const envelope = row.payloadText !== null ? JSON.parse(row.payloadText) as unknown : row.payload
      outcome = await this.#deps.process(envelope as SlackEnvelope)
    } catch (err) {
      const known = this.#deps.describeError?.(err) ?? null
      log.error({ err: known ?? err, eventId }, 'slack: event processing failed')
      outcome = { status: 'failed', error: known ?? 'internal error' }
    }
    await finishChatEvent(db, eventId, { ...outcome, now: clock.now() })
  }

  async #sweep (): Promise<void> {
    if (this.#closed || this.#sweeping !== null) return
    const { db, clock, log } = this.#deps
    this.#sweeping = (async () => {
      try {
        for (const eventId of await listClaimableChatEvents(
          db, clock.now(), CLAIM_LEASE_MS, SWEEP_BATCH
        )) this.#enqueue(eventId)
      } catch (err) {
        log.warn({ err: (err as Error).message }, 'slack: sweeping unprocessed events failed; retrying later')
      } finally {
        this.#sweeping = null
      }
    })()
    await this.#sweeping
  }
}

export function createEventQueue (deps: EventQueueDeps): EventQueue {
  return new SlackEventQueue(deps)
}
