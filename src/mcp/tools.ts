import type { ValidateFunction } from 'ajv'
import type { Principal } from '../principal.js'
import type { Services } from '../services.js'
import type { InvitationStatus } from '../db/invitations.js'
import type { Role } from '../db/users.js'
import { serviceError, type ServiceError } from '../errors.js'
import { toServiceError } from '../error-response.js'
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
  /** Validates the arguments (the REST body validator: nothing coerced or filled in). */
  validate: ValidateFunction
  /** Fills in the tool's defaults for absent optional arguments (after validation). */
  withDefaults(args: Record<string, unknown>): Record<string, unknown>
  run(principal: Principal, args: Record<string, unknown>): Promise<Record<string, unknown>>
}

type ToolServices = Pick<Services, 'invitations' | 'members'>

interface ToolDef {
  name: string
  operationId: string
  description: string
  rename?: Record<string, string>
  /** Required in the REST operation, optional for the tool (its schema `default` applies). */
  optional?: string[]
  /** Fields of the REST answer the tool never returns (removed from its output schema too). */
  withhold?: string[]
  run(s: ToolServices, p: Principal, a: Record<string, unknown>): Promise<unknown>
}

const DEFS: ToolDef[] = [
  {
    name: 'invite_user',
    operationId: 'postUsersInvite',
    description: 'Invite a person by e-mail to the workspace, as admin or member ' +
      '(role is optional here and defaults to member; the REST operation requires it). ' +
      'Re-inviting an e-mail with a pending invitation sends it again with a fresh link. ' +
      'The answer never contains the signup link: it is a credential, and it goes only to the invitee by e-mail.',
    optional: ['role'],
    // The signup link is a credential for the invitee: it never enters an assistant's context.
    withhold: ['invitationUrl'],
    run: async (s, p, a) => await s.invitations.invite(p, { email: a.email as string, role: a.role as Role })
  },
  {
    name: 'list_invitations',
    operationId: 'getInvitations',
    description: 'List the workspace\'s invitations, newest first, optionally only those with one status. ' +
      'Pass nextCursor as cursor for the next page.',
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
    run: async (s, p, a) => await s.members.list(
      p, { limit: a.limit as number, cursor: a.cursor as string | undefined }
    )
  }
]

/** The tool set, built once per app from the contract (schemas compiled once). */
export function createMcpTools (contract: Record<string, unknown>, services: ToolServices): McpTool[] {
  const compile = createValidatorCompiler()
  return DEFS.map(def => {
    const schemas = toolSchemasFor(contract, def.operationId, def.rename)
    if (def.optional !== undefined) {
      const required = (schemas.input.required as string[] | undefined ?? []).filter(n => !def.optional?.includes(n))
      schemas.input = { ...schemas.input, required }
    }
    const withheld = new Set(def.withhold ?? [])
    if (withheld.size > 0) {
      const properties = Object.fromEntries(
        Object.entries((schemas.output.properties ?? {}) as Record<string, unknown>).filter(([k]) => !withheld.has(k))
      )
      schemas.output = { ...schemas.output, properties }
    }
    const defaults = Object.entries((schemas.input.properties ?? {}) as Record<string, { default?: unknown }>)
      .filter(([, v]) => v.default !== undefined).map(([k, v]) => [k, v.default] as const)
    // 'body' mode: JSON arguments are typed already, so nothing is coerced (as for REST bodies).
    const validate = compile({
      schema: schemas.input,
      httpPart: 'body',
      method: 'POST',
      url: '/api/mcp'
    }) as ValidateFunction
    return {
      name: def.name,
      operationId: def.operationId,
      description: def.description,
      inputSchema: withoutExtensions(schemas.input) as Record<string, unknown>,
      outputSchema: withoutExtensions(schemas.output) as Record<string, unknown>,
      validate,
      withDefaults: args => ({ ...Object.fromEntries(defaults), ...args }),
      run: async (principal, args) => {
        const result = await def.run(services, principal, args) as Record<string, unknown>
        return withheld.size === 0
          ? result
          : Object.fromEntries(
            Object.entries(result).filter(([k]) => !withheld.has(k))
          )
      }
    }
  })
}

/** Arguments failing the schema → the same VALIDATION_FAILED (and details.errors) the REST API gives. */
export function argumentsError (validate: ValidateFunction): ServiceError {
  const err = Object.assign(
    new Error('invalid arguments'), { validation: validate.errors ?? [], validationContext: 'arguments' }
  )
  const { error } = toServiceError(err)
  return error.code === 'VALIDATION_FAILED' ? error : serviceError('VALIDATION_FAILED', ['arguments'])
}
