import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { startJobEngine, startJobs } from '../jobs/engine.js'
import type { JobDefinition, JobEngine } from '../ports/job-engine.js'

// The job engine on the app's database (src/jobs/engine.ts). Features declare their kinds of job
// (defineJobs); the workers and schedules start once the app is ready, and stop before the
// database closes (preClose), so no job is taken that could not finish.

declare module 'fastify' {
  interface FastifyInstance {
    jobs: JobEngine
    /** Run these kinds of job in this process, from the moment the app is ready. */
    defineJobs(definitions: readonly JobDefinition[]): void
  }
}

async function jobsPlugin (fastify: FastifyInstance): Promise<void> {
  const { config } = fastify
  const engine = await startJobEngine({
    db: fastify.db,
    log: fastify.log,
    schema: config.jobs.schema,
    pollSeconds: config.jobs.pollMs / 1000,
    // A job is taken as dead (its worker crashed) well after the longest attempt could last: a
    // webhook delivery, or a reminder's e-mail.
    expireSeconds: 2 * Math.ceil(Math.max(config.webhooks.timeoutMs, config.smtp.timeoutMs) / 1000) + 5,
    maintenanceSeconds: config.jobs.maintenanceSeconds,
    workers: true
  })
  const defined: JobDefinition[] = []
  fastify.decorate('jobs', engine)
  fastify.decorate('defineJobs', (definitions: readonly JobDefinition[]) => { defined.push(...definitions) })
  fastify.addHook('onReady', async () => { await startJobs(engine, defined) })
  fastify.addHook('preClose', async () => { await engine.stop() })
}

export default fp(jobsPlugin, { name: 'jobs', fastify: '5.x', dependencies: ['database'] })
