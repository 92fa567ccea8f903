import type { ValidateFunction } from 'ajv'
import { missingScopes, requireScopes, type Principal } from '../principal.js'
import type { Services } from '../services.js'
import type { InvitationStatus } from '../db/invitations.js'
import type { MemberStatus, Role } from '../db/users.js'
import { toApiUser } from '../members/directory.js'
import type { BatchInput } from '../invitations/batch.js'
import type { InviteRequestStatus } from '../db/invite-requests.js'
import type { DomainPolicy } from '../db/domains.js'
import { serviceError, type ServiceError } from '../errors.js'
import { toServiceError } from '../error-response.js'
import { createValidatorCompiler } from '../validation.js'
import { keyScopesOf, toolSchemasFor, withoutExtensions } from './contract-schemas.js'

// The MCP tools: each mirrors one REST operation, takes its schemas from openapi.yaml, is
// validated by the same Ajv set-up as the REST bodies, needs the API-key scopes the operation's
// security requirement names, and calls the same service function.

export interface McpTool {
  name: string
  /** The REST operation this tool mirrors. */
  operationId: string
  /** The scopes a key needs for it: its operation's. */
  scopes: readonly string[]
  /** Whether the principal holds the tool's scopes (tools/list shows only those). */
  allows(principal: Principal): boolean
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

type ToolServices = Pick<Services, 'invitations' | 'members' | 'inviteRequests' | 'inviteLinks' | 'domains'>

interface ToolDef {
  name: string
  operationId: string
  description: string
  /** Required in the REST operation, optional for the tool (its schema `default` applies). */
  optional?: string[]
  /** Fields of the REST answer the tool never returns (removed from its output schema too); a.b is nested. */
  withhold?: string[]
  run(s: ToolServices, p: Principal, a: Record<string, unknown>): Promise<unknown>
}

/** A list tool's arguments (validated against the operation's parameters): the page and its status filter. */
function pageArgs<S extends string> (a: Record<string, unknown>): { limit: number, status?: S, cursor?: string } {
  return {
    limit: a.limit as number,
    ...(a.status !== undefined ? { status: a.status as S } : {}),
    ...(a.cursor !== undefined ? { cursor: a.cursor as string } : {})
  }
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
    run: async (s, p, a) => await s.invitations.invite(p, {
      email: a.email as string, role: a.role as Role, locale: a.locale as string | undefined
    })
  },
  {
    name: 'invite_many',
    operationId: 'postInvitationsBatch',
    description: 'Invite up to 1,000 people at once: rows of { email, role? }, with role (default member) for ' +
      'the rows that name none. Answers a result per row (invited, resent, already_member, invalid, duplicate, ' +
      'over_budget with retryAfter seconds) and the e-mails\' progress; for more than 25 rows, the first 50 rows ' +
      '(nextCursor: the rest through GET /api/invitation-batches/{batchId}). Signup links are never returned.',
    run: async (s, p, a) => await s.invitations.inviteMany(p, a as unknown as BatchInput)
  },
  {
    name: 'list_invitations',
    operationId: 'getInvitations',
    description: 'List the workspace\'s invitations, newest first, optionally only those with one status. ' +
      'Pass nextCursor as cursor for the next page.',
    run: async (s, p, a) => await s.invitations.list(p, pageArgs<InvitationStatus>(a))
  },
  {
    name: 'revoke_invitation',
    operationId: 'deleteInvitationsInvitationId',
    description: 'Revoke a pending invitation by its id; its signup link stops working.',
    run: async (s, p, a) => await s.invitations.revoke(p, a.id as string)
  },
  {
    name: 'list_members',
    operationId: 'getUsers',
    description: 'List the members of the workspace, oldest first; q keeps those whose e-mail or name begins ' +
      'with it, role those of one role, status those active or suspended. Pass nextCursor as cursor (with the ' +
      'same filters) for the next page.',
    run: async (s, p, a) => await s.members.list(p, {
      limit: a.limit as number,
      cursor: a.cursor as string | undefined,
      search: a.q as string | undefined,
      role: a.role as Role | undefined,
      status: a.status as MemberStatus | undefined
    })
  },
  {
    name: 'suspend_member',
    operationId: 'postUsersUserIdSuspend',
    description: 'Suspend a member by their user id: their sessions end, their API keys are refused and they ' +
      'cannot sign in until reactivated; their role and the invitations they sent are kept. The last active ' +
      'admin cannot be suspended (LAST_ADMIN).',
    run: async (s, p, a) => toApiUser(await s.members.suspend(p, a.id as string))
  },
  {
    name: 'reactivate_member',
    operationId: 'postUsersUserIdReactivate',
    description: 'Reactivate a suspended member by their user id, with the role they had; their API keys work again.',
    run: async (s, p, a) => toApiUser(await s.members.reactivate(p, a.id as string))
  },
  {
    name: 'list_invite_requests',
    operationId: 'getInviteRequests',
    description: 'List the requests members made (in Slack, under the `request` invite policy) for someone ' +
      'to be invited, newest first, optionally only those with one status. ' +
      'Pass nextCursor as cursor for the next page.',
    run: async (s, p, a) => await s.inviteRequests.list(p, pageArgs<InviteRequestStatus>(a))
  },
  {
    name: 'approve_invite_request',
    operationId: 'postInviteRequestsRequestIdApprove',
    description: 'Approve a pending invite request by its id: the invitation is sent as a member, or in the ' +
      'role given (admin only when you name it; what the requester asked for is not granted by itself). ' +
      'If another admin decided first, the answer is INVITE_REQUEST_NOT_PENDING.',
    withhold: ['invitation.invitationUrl'],
    run: async (s, p, a) => await s.inviteRequests.approve(
      p, a.id as string, a.role !== undefined ? { role: a.role as Role } : {}
    )
  },
  {
    name: 'deny_invite_request',
    operationId: 'postInviteRequestsRequestIdDeny',
    description: 'Deny a pending invite request by its id, with an optional reason the requester is told.',
    run: async (s, p, a) => await s.inviteRequests.deny(
      p, a.id as string, a.reason !== undefined ? { reason: a.reason as string } : {}
    )
  },
  {
    name: 'create_invite_link',
    operationId: 'postInviteLinks',
    description: 'Create a shareable link anyone may use to join the workspace as a member, after proving their ' +
      'e-mail address: optionally limited in uses (maxUses), time (expiresInHours, 1 to 2160, default 168), ' +
      'e-mail domains (allowedDomains), or needing an admin\'s approval (requiresApproval). The answer\'s url ' +
      'is shown this once: give it to the admin who asked, to share where they choose.',
    run: async (s, p, a) => await s.inviteLinks.create(p, {
      ...(a.maxUses !== undefined ? { maxUses: a.maxUses as number | null } : {}),
      ...(a.expiresInHours !== undefined ? { expiresInHours: a.expiresInHours as number } : {}),
      ...(a.allowedDomains !== undefined ? { allowedDomains: a.allowedDomains as string[] } : {}),
      ...(a.requiresApproval !== undefined ? { requiresApproval: a.requiresApproval as boolean } : {})
    })
  },
  {
    name: 'list_invite_links',
    operationId: 'getInviteLinks',
    description: 'List the workspace\'s invite links, newest first, with their status, uses and expiry ' +
      '(never their URL). Pass nextCursor as cursor for the next page.',
    run: async (s, p, a) => await s.inviteLinks.list(p, {
      limit: a.limit as number, ...(a.cursor !== undefined ? { cursor: a.cursor as string } : {})
    })
  },
  {
    name: 'revoke_invite_link',
    operationId: 'deleteInviteLinksLinkId',
    description: 'Revoke an invite link by its id; the link and the confirmations e-mailed through it stop working.',
    run: async (s, p, a) => await s.inviteLinks.revoke(p, a.id as string)
  },
  {
    name: 'list_domains',
    operationId: 'getDomains',
    description: 'List the e-mail domains of the workspace (pending, verified or failed), each with the DNS TXT ' +
      'record to publish and its join policy (off, suggest, auto_join).',
    run: async (s, p) => ({ items: await s.domains.list(p) })
  },
  {
    name: 'add_domain',
    operationId: 'postDomains',
    description: 'Add an e-mail domain for the workspace to verify; the answer has the DNS TXT record the domain\'s ' +
      'owner must publish (verification.name, verification.value). policy (default off) says who may join once it ' +
      'is verified: suggest (an invite request for the admins) or auto_join (a member at once). Consumer mail ' +
      'providers are refused (DOMAIN_NOT_ALLOWED), and so is a domain another workspace verified (DOMAIN_CLAIMED).',
    run: async (s, p, a) => await s.domains.add(p, {
      domain: a.domain as string, policy: a.policy as DomainPolicy | undefined
    })
  },
  {
    name: 'verify_domain',
    operationId: 'postDomainsDomainIdVerify',
    description: 'Look for a domain\'s DNS TXT record now, by the domain\'s id: found, it is verified; ' +
      'otherwise it stays as it was and checkError says why.',
    run: async (s, p, a) => await s.domains.verify(p, a.id as string)
  }
]

type Obj = Record<string, unknown>

/** A copy of an answer without the field at `path` (['a', 'b']: field b of object field a). */
function withoutField (value: Obj, path: string[]): Obj {
  const [head, ...rest] = path
  if (head === undefined || !(head in value)) return value
  if (rest.length === 0) return Object.fromEntries(Object.entries(value).filter(([k]) => k !== head))
  return { ...value, [head]: withoutField(value[head] as Obj, rest) }
}

/** The same for an object schema: the property at `path` is no longer declared. */
function withoutProperty (schema: Obj, path: string[]): Obj {
  const [head, ...rest] = path
  const properties = (schema.properties ?? {}) as Obj
  if (head === undefined || !(head in properties)) return schema
  return {
    ...schema,
    properties: rest.length === 0
      ? withoutField(properties, [head])
      : { ...properties, [head]: withoutProperty(properties[head] as Obj, rest) }
  }
}

/**
 * A tool on one resource takes its id as `id`, whatever the operation calls its path parameter
 * (`{invitationId}`, `{domainId}`): the rename toolSchemasFor applies.
 */
function idArgument (contract: Record<string, unknown>, operationId: string): Record<string, string> {
  const paths = (contract.paths ?? {}) as Record<string, Record<string, { operationId?: string } | undefined>>
  const [path = ''] = Object.entries(paths)
    .find(([, item]) => Object.values(item).some(op => op?.operationId === operationId)) ?? []
  return Object.fromEntries([...path.matchAll(/\{(\w+)\}/g)].map(m => [m[1] as string, 'id']))
}

/** The tool set, built once per app from the contract (schemas compiled once). */
export function createMcpTools (contract: Record<string, unknown>, services: ToolServices): McpTool[] {
  const compile = createValidatorCompiler()
  return DEFS.map(def => {
    const schemas = toolSchemasFor(contract, def.operationId, idArgument(contract, def.operationId))
    const scopes = keyScopesOf(contract as never, def.operationId)
    if (def.optional !== undefined) {
      const required = (schemas.input.required as string[] | undefined ?? []).filter(n => !def.optional?.includes(n))
      schemas.input = { ...schemas.input, required }
    }
    const withheld = (def.withhold ?? []).map(w => w.split('.'))
    for (const w of withheld) schemas.output = withoutProperty(schemas.output, w)
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
      scopes,
      allows: principal => missingScopes(principal, scopes).length === 0,
      description: def.description,
      inputSchema: withoutExtensions(schemas.input) as Record<string, unknown>,
      outputSchema: withoutExtensions(schemas.output) as Record<string, unknown>,
      validate,
      withDefaults: args => ({ ...Object.fromEntries(defaults), ...args }),
      run: async (principal, args) => {
        requireScopes(principal, scopes)
        const result = await def.run(services, principal, args) as Record<string, unknown>
        return withheld.reduce((r, w) => withoutField(r, w), result)
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
