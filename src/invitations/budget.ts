import { windowSpent, type WindowCounter } from '../lib/window-counter.js'
import type { InvitationBudget } from '../ports/invitation-budget.js'

// The per-workspace invitation-e-mail budget (INVITE_EMAILS_PER_HOUR). Whoever invites — REST,
// MCP, the chat bot — draws one e-mail just before sending, and gives it back when nothing was
// handed to the SMTP server or the identity provider, so refused requests, replays and failed
// sends do not count. The counter is the rate limits' (memory, or Redis with the same fail-open
// policy).

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
    async takeUpTo (workspaceId, wanted) {
      if (wanted <= 0) return { granted: 0, retryAfterSeconds: 0 }
      const { current, ttl } = await counter.add(workspaceId, wanted, HOUR_MS)
      const over = Math.min(wanted, Math.max(0, current - perHour))
      // What was drawn past the budget is given back at once: only what is granted counts.
      if (over > 0) {
        await counter.add(workspaceId, -over, HOUR_MS)
        onRefused()
      }
      return { granted: wanted - over, retryAfterSeconds: over > 0 ? Math.max(1, Math.ceil(ttl / 1000)) : 0 }
    },
    async refund (workspaceId, count = 1) {
      if (count > 0) await counter.add(workspaceId, -count, HOUR_MS)
    }
  }
}
