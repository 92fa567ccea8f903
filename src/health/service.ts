import type { Ports } from '../ports/index.js'
import type { RelayState } from '../ports/mailer.js'
import { withDeadline } from '../lib/deadline.js'

// What GET/HEAD /api/health learn from the ports: the database's ping and the mail relay as last
// seen. The handler adds what only the server knows (load shedding, draining) and shapes the answer.

/** Why a request was shed (the ErrorResponse message: "The service is unavailable: …"). */
export const OVERLOADED = 'the service is overloaded; retry shortly'

export interface HealthService {
  /** Which database answers (`postgres` or `pglite`), for the body's `checks.database.kind`. */
  readonly databaseKind: Ports['db']['kind']
  /**
   * The database's latency in ms: a fresh cached one as it is (a number: no promise, no await),
   * else a ping's (bounded at 2 s; rejects when the database does not answer).
   */
  ping(): number | Promise<number>
  /** The relay as last seen (at start, then by sends): never a connection from here. */
  relay(): RelayState | undefined
}

export function createHealthService (deps: Pick<Ports, 'db' | 'mailer' | 'config'>): HealthService {
  const { db, mailer, config } = deps
  // A load balancer polling hard must not load the database: concurrent checks share one ping,
  // and a successful ping answers for HEALTH_CACHE_MS (default 1 s; 0: every check pings).
  // A failed ping is never reused: the next check pings again. On the embedded database the
  // ping runs on the request thread, so this is what keeps /api/health as cheap as a static
  // route there.
  let inFlight: Promise<number> | null = null
  let okUntil = 0
  let lastLatencyMs = 0
  return {
    databaseKind: db.kind,
    ping () {
      if (performance.now() < okUntil) return lastLatencyMs
      inFlight ??= (async () => {
        const started = performance.now()
        await withDeadline(db.ping(), 2000, 'database ping')
        const finished = performance.now()
        lastLatencyMs = Math.round((finished - started) * 100) / 100
        okUntil = finished + config.healthCacheMs
        return lastLatencyMs
      })().finally(() => { inFlight = null })
      return inFlight
    },
    relay: () => mailer.relayState?.()
  }
}
