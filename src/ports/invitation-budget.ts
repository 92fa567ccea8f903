// A port: the per-workspace invitation-e-mail budget (INVITE_EMAILS_PER_HOUR), drawn on by every
// door that invites; src/invitations/budget.ts implements it over the rate limits' counter.

export interface InvitationBudget {
  /** Draws one e-mail from the workspace's hourly budget; throws RATE_LIMITED (with Retry-After) when it is spent. */
  take(workspaceId: string): Promise<void>
  /**
   * Draws up to `wanted` e-mails at once (a batch): all of them, or as many as are left in the
   * window — never a refusal. `retryAfterSeconds` says when the window that refused the rest ends.
   */
  takeUpTo(workspaceId: string, wanted: number): Promise<{ granted: number, retryAfterSeconds: number }>
  /** Gives back `count` (default one) e-mails drawn by `take` or `takeUpTo` (nothing was sent). */
  refund(workspaceId: string, count?: number): Promise<void>
}
