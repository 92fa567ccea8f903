import type { Ports } from '../ports.js'
import { randomUUID } from 'node:crypto'
import { serviceError } from '../errors.js'
import { checkSlackSignature } from './signature.js'
import { createSlackWebApi, SlackApiError, type SlackWebApi } from './web-api.js'
import { createSlackInstall, type SlackConfig, type SlackInstall } from './install.js'
import { createEventQueue, type EventQueue } from './event-queue.js'
import { handleSlackEvent } from './bot.js'
import type { InvitationsPort, InviteRequestsPort } from './deps.js'
import type { InviteRequestNotice } from '../invite-requests/service.js'
import type { components } from '../generated/openapi.js'
import { interactionIdentity, parseEmailList, parseInviteText, USAGE } from './interactions.js'
import { escapeSlackText } from './commands.js'
import type { InviterNotice } from '../invitations/inviter-notice.js'

// The Slack app, composed: OAuth v2 install (install.ts), signed requests (signature.ts),
// durable intake with its sweep (event-queue.ts) for events, slash commands and interactions,
// the bot (bot.ts), commands and clicks (interactions.ts), the App Home (home.ts) and telling
// people about invite requests (notices.ts). Without a Slack config or an encryption key every
// operation answers CHAT_PLATFORM_NOT_CONFIGURED.

export { botTokenContext } from './install.js'

type CommandAck = components['schemas']['SlackCommandAck']
type InteractionAck = components['schemas']['SlackInteractionAck']

export interface SlackService extends SlackInstall, EventQueue {
  readonly configured: boolean
  /** A slash command: checked and recorded now, done after the acknowledgement. */
  command(form: Record<string, unknown>): Promise<CommandAck>
  /** An interaction's `payload` (JSON text): a modal's invalid input answered now, the rest queued. */
  interaction(payload: string): Promise<InteractionAck>
  /** Tell Slack about an invite request's change (after it is committed); never throws. */
  noticeRequest(notice: InviteRequestNotice): void
  /** Tell an inviter about their invitation (accepted, delivery failed) in a DM; never throws. */
  noticeInviter(notice: InviterNotice): void
  /** The slackSignature security scheme: throws CHAT_PLATFORM_NOT_CONFIGURED or SIGNATURE_INVALID. */
  verifySignature(request: { headers: Record<string, string | string[] | undefined>, rawBody: Buffer | null }): void
}

export type SlackDeps = Pick<Ports, 'config' | 'db' | 'clock' | 'log' | 'events'> & {
  invitations: InvitationsPort
  inviteRequests: InviteRequestsPort
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

  const install = createSlackInstall({ db, clock, log, api, events: deps.events, requireConfigured })
  const bot = {
    db,
    clock,
    log,
    api,
    invitations: deps.invitations,
    inviteRequests: deps.inviteRequests,
    events: deps.events,
    requireKey: () => requireConfigured().key
  }
  // Notices of changes made through any door are recorded in the durable queue like events (a
  // restart picks them up); recording is tracked so whenIdle and close wait for it.
  const notices = new Set<Promise<unknown>>()
  const track = (work: Promise<unknown>) => {
    const done = work.catch((err: unknown) => {
      log.warn({ err: err instanceof Error ? err.message : err }, 'slack: telling people in Slack failed')
    }).finally(() => notices.delete(done))
    notices.add(done)
  }
  const settle = async () => {
    await queue.whenIdle()
    while (notices.size > 0) {
      await Promise.all([...notices])
      await queue.whenIdle()
    }
  }
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

    async command (form) {
      requireConfigured()
      const cmd = parseInviteText(typeof form.text === 'string' ? form.text : '')
      if (cmd === null) return { response_type: 'ephemeral', text: USAGE }
      // The legacy verification token is a shared secret: it is not kept.
      const { token: _legacy, ...fields } = form
      await queue.receive(
        {
          type: 'slash_command',
          team_id: String(form.team_id),
          event_id: `command:${String(form.trigger_id)}`,
          event: fields
        },
        {}
      )
      return { response_type: 'ephemeral', text: `Inviting ${escapeSlackText(cmd.email)} as ${cmd.role}…` }
    },

    async interaction (text) {
      requireConfigured()
      const payload = parsePayload(text)
      const view = (payload.view ?? {}) as Record<string, unknown>
      if (payload.type === 'view_submission' && view.callback_id === 'invite_people') {
        const typed = ((view.state as { values?: { emails?: { emails?: { value?: unknown } } } } | undefined)
          ?.values?.emails?.emails?.value)
        const { emails, invalid } = parseEmailList(typeof typed === 'string' ? typed : '')
        // Shown under the field while the modal stays open (Slack's response_action: errors).
        if (invalid.length > 0) {
          const shown = invalid.slice(0, 5).join(', ')
          return { response_action: 'errors', errors: { emails: `Not an e-mail address: ${shown}` } }
        }
        if (emails.length === 0) {
          return { response_action: 'errors', errors: { emails: 'Type at least one e-mail address' } }
        }
      }
      const { token: _legacy, ...event } = payload
      const teamId = (payload.team as { id?: unknown } | undefined)?.id
      // One click acts once, however many times it is delivered (interactionIdentity).
      const id = interactionIdentity(payload)
      if (id === null) {
        log.warn({ type: payload.type }, 'slack: interaction with neither trigger_id nor action identity, refused')
        throw serviceError('VALIDATION_FAILED', ['the interaction has no trigger_id, action_ts or view id'], {
          errors: [{ in: 'body', field: 'payload', message: 'has no trigger_id, action_ts or view id' }]
        })
      }
      await queue.receive({
        type: 'interaction', team_id: typeof teamId === 'string' ? teamId : '', event_id: `interaction:${id}`, event
      }, {})
      return {}
    },

    noticeRequest (notice) {
      if (!configured) return
      const { request } = notice
      // Each request is created, approved and denied at most once: the id deduplicates.
      track(queue.receive({
        type: 'notice',
        event_id: `notice:${notice.kind}:${request.id}`,
        event: { type: `invite_request.${notice.kind}`, requestId: request.id, workspaceId: request.workspaceId }
      }, {}))
    },

    noticeInviter (notice) {
      if (!configured) return
      // Delivery may fail once per re-send: each failure is its own notice.
      track(queue.receive({
        type: 'notice',
        event_id: `notice:${notice.kind}:${notice.invitationId}:${randomUUID()}`,
        event: { ...notice, type: `invitation.${notice.kind}` }
      }, {}))
    },

    whenIdle: settle,
    close: async () => {
      await queue.close()
      await Promise.all([...notices])
    }
  }
}

/** An interaction's payload: a JSON object with a type, or 400. */
function parsePayload (text: string): Record<string, unknown> {
  let payload: unknown
  try {
    payload = JSON.parse(text)
  } catch {
    payload = null
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload) ||
    typeof (payload as { type?: unknown }).type !== 'string') {
    throw serviceError('VALIDATION_FAILED', ['body.payload is not a JSON object with a type'], {
      errors: [{ in: 'body', field: 'payload', message: 'is not a JSON object with a type' }]
    })
  }
  return payload as Record<string, unknown>
}
