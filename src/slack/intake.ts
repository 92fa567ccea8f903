import type { components } from '../generated/openapi.js'
import type { Logger } from '../logger.js'
import { serviceError } from '../errors.js'
import type { EventQueue } from './event-queue.js'
import { interactionIdentity, parseEmailList, parseInviteText, USAGE } from './interactions.js'
import { escapeSlackText } from './commands.js'
import { isLinkCommand } from './invite-link-from-chat.js'

// Slash commands and interactions: checked and acknowledged now (Slack waits three seconds),
// recorded in the durable queue (event-queue.ts), done after the acknowledgement (bot.ts).

export type CommandAck = components['schemas']['SlackCommandAck']
export type InteractionAck = components['schemas']['SlackInteractionAck']

interface IntakeDeps { queue: EventQueue, log: Logger }

export async function acknowledgeCommand (deps: IntakeDeps, form: Record<string, unknown>): Promise<CommandAck> {
  const text = typeof form.text === 'string' ? form.text : ''
  const cmd = isLinkCommand(text) ? null : parseInviteText(text)
  if (cmd === null && !isLinkCommand(text)) return { response_type: 'ephemeral', text: USAGE }
  // The legacy verification token is a shared secret: it is not kept.
  const { token: _legacy, ...fields } = form
  await deps.queue.receive(
    {
      type: 'slash_command',
      team_id: String(form.team_id),
      event_id: `command:${String(form.trigger_id)}`,
      event: fields
    },
    {}
  )
  // The link itself follows through the command's response_url, to this person only.
  if (cmd === null) return { response_type: 'ephemeral', text: 'Making an invite link for you…' }
  return { response_type: 'ephemeral', text: `Inviting ${escapeSlackText(cmd.email)} as ${cmd.role}…` }
}

/** An interaction's `payload` (JSON text): a modal's invalid input answered now, the rest queued. */
export async function acknowledgeInteraction (deps: IntakeDeps, text: string): Promise<InteractionAck> {
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
    deps.log.warn({ type: payload.type }, 'slack: interaction with neither trigger_id nor action identity, refused')
    throw serviceError('VALIDATION_FAILED', ['the interaction has no trigger_id, action_ts or view id'], {
      errors: [{ in: 'body', field: 'payload', message: 'has no trigger_id, action_ts or view id' }]
    })
  }
  await deps.queue.receive({
    type: 'interaction', team_id: typeof teamId === 'string' ? teamId : '', event_id: `interaction:${id}`, event
  }, {})
  return {}
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
