import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { Clock } from '../clock.js'
import { createRetentionSweep, type RetentionSweep } from '../housekeeping/retention.js'

// Dead rows (expired tokens, old events, …) deleted on an interval from the moment the app is
// ready; the sweep stops before the database closes.

declare module 'fastify' {
  interface FastifyInstance {
    /** Deletes dead rows on an interval; tests call sweep() directly. */
    retention: RetentionSweep
  }
}

async function housekeepingPlugin (fastify: FastifyInstance, opts: { clock: Clock }): Promise<void> {
  const { db, log, config } = fastify
  const retention = createRetentionSweep({ db, clock: opts.clock, log, config })
  fastify.decorate('retention', retention)
  fastify.addHook('onReady', async () => { retention.start() })
  fastify.addHook('onClose', async () => { await retention.stop() })
}

export default fp(housekeepingPlugin, { name: 'housekeeping', fastify: '5.x', dependencies: ['database'] })
