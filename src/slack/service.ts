import type { Config } from '../config.js'
import type { Clock } from '../clock.js'
import type { Database } from '../db/client.js'
import type { Logger } from '../logger.js'
import { serviceError } from '../errors.js'
import { checkSlackSignature } from './signature.js'
import { createSlackWebApi, SlackApiError, type SlackWebApi } from './web-api.js'
import { createSlackInstall, type SlackConfig, type SlackInstall } from './install.js'
import { createEventQueue, type EventQueue } from './event-queue.js'
import { handleSlackEvent, type InvitationsPort } from './bot.js'

// The Slack app, composed: OAuth v2 install (install.ts), signed requests (signature.ts),
// durable event intake with its sweep (event-queue.ts), and the bot that lets a workspace admin
// invite people from Slack (bot.ts). Without a Slack config or an encryption key every operation
// answers CHAT_PLATFORM_NOT_CONFIGURED.

export { botTokenContext } from './install.js'

export interface SlackService extends SlackInstall, EventQueue {
  readonly configured: boolean
  /** The slackSignature security scheme: throws CHAT_PLATFORM_NOT_CONFIGURED or SIGNATURE_INVALID. */
  verifySignature(request: { headers: Record<string, string | string[] | undefined>, rawBody: Buffer | null }): void
}

export interface SlackDeps {
  config: Config
  db: Database
  clock: Clock
  log: Logger
  invitations: InvitationsPort
  api?: SlackWebApi
}

export function createSlackService (deps: SlackDeps): SlackService {
  const { config, db, clock, log } = deps
  const slack = config.slack
  const key = config.encryptionKey
  const api = deps.api ?? createSlackWebApi({ apiUrl: slack?.apiUrl ?? 'https://slack.com/api', log })
  const configured = slack !== null && key !== null

  function requireConfigured (): { slack: SlackConfig, key: Buffer } {
    if (slack === null || key === null) throw serviceError('CHAT_PLATFORM_NOT_CONFIGURED')
    return { slack, key }
  }

  const install = createSlackInstall({ db, clock, log, api, requireConfigured })
  const bot = { db, clock, log, api, invitations: deps.invitations, requireKey: () => requireConfigured().key }
  const queue = createEventQueue({
    db,
    clock,
    log,
    process: async envelope => await handleSlackEvent(bot, envelope),
    describeError: err => err instanceof SlackApiError ? err.message : null,
    sweep: configured
  })

  return {
    configured,
    startInstall: install.startInstall,
    completeInstall: install.completeInstall,

    verifySignature (request) {
      const { slack } = requireConfigured()
      const problem = checkSlackSignature({
        signingSecret: slack.signingSecret,
        signature: request.headers['x-slack-signature'],
        timestamp: request.headers['x-slack-request-timestamp'],
        rawBody: request.rawBody,
        now: clock.now()
      })
      if (problem !== null) {
        log.debug({ problem }, 'slack: request signature refused')
        throw serviceError('SIGNATURE_INVALID')
      }
    },

    async receive (envelope, meta) {
      requireConfigured()
      return await queue.receive(envelope, meta)
    },
    whenIdle: async () => { await queue.whenIdle() },
    close: async () => { await queue.close() }
  }
}
