import { serviceError } from '../errors.js'

// The contract's `security` checks the role on the REST door only. A service that the chat door
// (whose principal may be any member) or the MCP door reaches too, and that is for admins, checks
// it itself with this: invite requests (approve, deny, notice settings) and every domain operation.

/** 403 FORBIDDEN unless the actor is an admin. */
export function requireAdmin (actor: { role: string }): void {
  if (actor.role !== 'admin') throw serviceError('FORBIDDEN', ['admin'])
}
