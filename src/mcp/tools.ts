import type { ValidateFunction } from 'ajv'
import type { Principal } from '../principal.js'
import type { Services } from '../services.js'
import type { InvitationStatus } from '../db/invitations.js'
import type { Role } from '../db/users.js'
import { serviceError, type ServiceError } from '../errors.js'
import { toServiceError } from '../plugins/errors.js'
import { createValidatorCompiler } from '../validation.js'
import { toolSchemasFor, withoutExtensions } from './contract-schemas.js'

// The MCP tools: each mirrors one REST operation, takes its schemas from openapi.yaml, is
// validated by the same Ajv set-up as the REST bodies, and calls the same service function.

export interface McpTool {
  name: string
  /** The REST operation this tool mirrors. */
  operationId: string
  description: string
  /** As advertised in tools/list (x- extensions removed). */
  inputSchema: Record<string, unknown>
  outputSchema: Record<string, unknown>
  /** Validates (and, like the REST validator, trims and fills defaults in) the arguments. */
  validate: ValidateFunction
  run(principal: Principal, args: Record<string, unknown>): Promise<Record<string, unknown>>
}

type ToolServices = Pick<Services, 'invitations' | 'members'>

interface ToolDef {
  name: string
  operationId: string
  description: string
  rename?: Record<string, string>
  run(s: ToolServices, p: Principal, a: Record<string, unknown>): Promise<unknown>
}

const DEFS: ToolDef[] = [
  {
    name: 'invite_user',
    operationId: 'postUsersInvite',
    description: 'Invite a person by e-mail to the workspace, as admin or member (default member). Re-inviting an e-mail with a pending invitation sends it again with a fresh link.',
    run: async (s, p, a) => await s.invitations.invite(p, { email: a.email as string, role: a.role as Role })
  },
  {
    name: 'list_invitations',
    operationId: 'getInvitations',
    description: 'List the workspace\'s invitations, newest first, optionally only those with one status. Pass nextCursor as cursor for the next page.',
    run: async (s, p, a) => await s.invitations.list(p, {
      limit: a.limit as number,
      ...(a.status !== undefined ? { status: a.status as InvitationStatus } : {}),
      ...(a.cursor !== undefined ? { cursor: a.cursor as string } : {})
    })
  },
  {
    name: 'revoke_invitation',
    operationId: 'deleteInvitationsInvitationId',
    description: 'Revoke a pending invitation by its id; its signup link stops working.',
    rename: { invitationId: 'id' },
    run: async (s, p, a) => await s.invitations.revoke(p, a.id as string)
  },
  {
    name: 'list_members',
    operationId: 'getUsers',
    description: 'List the members of the workspace, oldest first. Pass nextCursor as cursor for the next page.',
    run: async (s, p, a) => await s.members.list(p, { limit: a.limit as number, cursor: a.cursor as string | undefined })
  }
]

/** The tool set, built once per app from the contract (schemas compiled once). */
export function createMcpTools (contract: Record<string, unknown>, services: ToolServices): McpTool[] {
  const compile = createValidatorCompiler()
  return DEFS.map(def => {
    const schemas = toolSchemasFor(contract, def.operationId, def.rename)
    // 'body' mode: JSON arguments are typed already, so nothing is coerced (as for REST bodies).
    const validate = compile({ schema: schemas.input, httpPart: 'body', method: 'POST', url: '/api/mcp' }) as ValidateFunction
    return {
      name: def.name,
      operationId: def.operationId,
      description: def.description,
      inputSchema: withoutExtensions(schemas.input) as Record<string, unknown>,
      outputSchema: withoutExtensions(schemas.output) as Record<string, unknown>,
      validate,
      run: async (principal, args) => await def.run(services, principal, args) as Record<string, unknown>
    }
  })
}

/** Arguments failing the schema → the same VALIDATION_FAILED (and details.errors) the REST API gives. */
export function argumentsError (validate: ValidateFunction): ServiceError {
  const err = Object.assign(new Error('invalid arguments'), { validation: validate.errors ?? [], validationContext: 'arguments' })
  const { error } = toServiceError(err)
  return error.code === 'VALIDATION_FAILED' ? error : serviceError('VALIDATION_FAILED', ['arguments'])
}
