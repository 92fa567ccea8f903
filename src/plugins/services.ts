import fp from 'fastify-plugin'
import { lookup as dnsLookup } from 'node:dns'
import type { LookupFunction } from 'node:net'
import type { FastifyInstance } from 'fastify'
import type { Clock } from '../clock.js'
import { createServices, type Services } from '../services.js'
import { createInvitationBudget } from '../invitations/budget.js'
import { createEventOutbox } from '../events/outbox.js'
import { createDnsResolver } from '../domains/resolver.js'
import type { Resolver } from '../ports/index.js'

// The application: the services (src/services.ts) over the infrastructure plugins' ports, decorated
// as `services`. Their jobs run on the job engine; the bounce listener is started by src/server.ts
// once the API listens, and stops taking bounces first on close (in-flight messages finish) while
// the database is still open.

declare module 'fastify' {
  interface FastifyInstance {
    services: Services
    /** Starts the bounce listener (BOUNCE_SMTP_PORT) as src/server.ts does; its URL, or null when it is off. */
    listenBounces(): Promise<string | null>
  }
}

interface ServicesPluginOptions {
  clock: Clock
  /** Name resolution for outgoing webhooks (tests make a name resolve to what they need). */
  lookup?: LookupFunction | undefined
  /** TXT lookups for domain verification (default: node:dns on DNS_SERVERS). */
  resolver?: Resolver | undefined
}

async function servicesPlugin (fastify: FastifyInstance, opts: ServicesPluginOptions): Promise<void> {
  const { config, jobs, meter } = fastify
  const services = createServices({
    config,
    db: fastify.db,
    clock: opts.clock,
    mailer: fastify.mailer,
    log: fastify.log,
    signer: fastify.sessionSigner,
    invitationBudget: createInvitationBudget(
      fastify.windowCounter('invitation-emails:'), config.inviteEmailsPerHour,
      () => { meter.rateLimitRefusal('invitation-emails') }
    ),
    jobs,
    events: createEventOutbox(jobs),
    lookup: opts.lookup ?? dnsLookup,
    resolver: opts.resolver ?? createDnsResolver(config.dns),
    meter
  })
  fastify.decorate('services', services)
  fastify.defineJobs(services.jobs)
  fastify.decorate('listenBounces', async () => await services.bounces.listener.listen())
  fastify.addHook('preClose', async () => { await services.bounces.listener.close() })
  fastify.addHook('onClose', async () => { await services.close() })
}

export default fp(servicesPlugin, {
  name: 'services',
  fastify: '5.x',
  dependencies: ['database', 'mailer', 'auth-tokens', 'rate-limit', 'jobs', 'metrics']
})
