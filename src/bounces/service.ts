import type { Ports } from '../ports/index.js'
import type { components } from '../generated/openapi.js'
import type { SignedDelivery } from '../webhooks/signing.js'
import { receiveResendEvent } from './resend.js'
import { createBounceListener, type BounceListener } from './smtp-intake.js'

// Bounces of invitation e-mails, by either intake: the DSN listener (SMTP) and the e-mail
// provider's signed webhook. Both end in recordDeliveryReport (record.ts).

export interface BounceService {
  /** POST /api/email-events/resend: throws SIGNATURE_INVALID unless Resend signed it. */
  resendEvent(
    delivery: SignedDelivery, event: components['schemas']['ResendEmailEvent']
  ): Promise<components['schemas']['EmailEventAck']>
  /** The DSN listener (BOUNCE_SMTP_PORT); src/server.ts starts it, the app's close stops it. */
  readonly listener: BounceListener
}

export function createBounceService (ports: Ports): BounceService {
  return {
    resendEvent: async (delivery, event) => await receiveResendEvent(ports, delivery, event),
    listener: createBounceListener(ports)
  }
}
