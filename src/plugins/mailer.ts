import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { createMailer, tracedMailer } from '../mail/mailer.js'
import type { Mailer } from '../ports/mailer.js'
import type { AdapterOptions } from './database.js'

// The Mailer port's adapter for an app: SMTP (SMTP_URL) or the dev mailbox, decorated as `mailer`
// and closed with the app. A test's own mailer (opts.mailer) is used as given.

declare module 'fastify' {
  interface FastifyInstance {
    mailer: Mailer
  }
}

async function mailerPlugin (fastify: FastifyInstance, opts: AdapterOptions<'mailer', Mailer>): Promise<void> {
  const { config } = opts
  let mailer = opts.mailer
  if (mailer === undefined) {
    const own = createMailer({
      smtpUrl: config.smtp.url,
      from: config.smtp.from,
      timeoutMs: config.smtp.timeoutMs,
      poolConnections: config.smtp.poolConnections,
      dataDir: config.dataDir,
      log: fastify.log
    })
    fastify.addHook('onClose', async () => { await own.close() })
    mailer = own
  }
  fastify.decorate('mailer', opts.tracer !== undefined ? tracedMailer(mailer, opts.tracer) : mailer)
}

export default fp(mailerPlugin, { name: 'mailer', fastify: '5.x' })
