import { windowSpent, type WindowCounter } from '../lib/window-counter.js'

// The per-workspace invitation-e-mail budget (INVITE_EMAILS_PER_HOUR). Whoever invites — REST,
// MCP, the chat bot — draws one e-mail just before sending, and gives it back when nothing was
// handed to the SMTP server or the identity provider, so refused requests, replays and failed
// sends do not count. The counter is the rate limits' (memory, or Redis with the same fail-open
// policy).

export interface InvitationBudget {
  /** Draws one e-mail from the workspace's hourly budget; throws RATE_LIMITED (with Retry-After) when it is spent. */
  take(workspaceId: string): Promise<void>
  /** Gives back one e-mail drawn by `take` (nothing was sent). */
  refund(workspaceId: string): Promise<void>
}

const HOUR_MS = 3_600_000

export function createInvitationBudget (
  counter: WindowCounter,
  perHour: number,
  /** Told of each refused draw (the metrics count refusals by scope). */
  onRefused: () => void = () => {}
): InvitationBudget {
  return {
    async take (workspaceId) {
      const { current, ttl } = await counter.add(workspaceId, 1, HOUR_MS)
      if (current <= perHour) return
      // A refused draw is not a draw: otherwise a refund after it would not free a slot.
      await counter.add(workspaceId, -1, HOUR_MS)
      onRefused()
      throw windowSpent(perHour, ttl)
    },
    async refund (workspaceId) {
      await counter.add(workspaceId, -1, HOUR_MS)
    }
  }
}
