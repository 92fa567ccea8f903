import { isLanguageTag } from '../i18n/locales.js'
import { workspaceGone, type Principal } from '../principal.js'
import { isForeignKeyViolation } from '../db/errors.js'
import { serviceError } from '../errors.js'
import { hashToken, randomToken } from '../lib/tokens.js'
import { isUuid } from '../lib/uuid.js'
import { decodeCursor, pageOf } from '../lib/pagination.js'
import { auditPrincipalAction } from '../audit/actor.js'
import {
  insertInviteLink, listInviteLinks, replaceInviteLinkCode, revokeInviteLink, type InviteLinkRow
} from '../db/invite-links.js'
import {
  CODE_BYTES, inviteLinkView, joinUrl, type InviteLinkCreated, type InviteLinkDeps, type InviteLinkView
} from './context.js'

// The admins' side: create, list, revoke, regenerate. Each change is audited in its transaction.

export interface CreateInviteLinkInput {
  /** What admins call the link (1 to 100 characters); none by default. */
  name?: string | null
  maxUses?: number | null
  expiresInHours?: number
  allowedDomains?: string[]
  requiresApproval?: boolean
  /** The language of its joiners' e-mails (BCP 47); none: the workspace's. */
  locale?: string | null
}

const HOUR_MS = 3_600_000
const DEFAULT_HOURS = 7 * 24
const MAX_HOURS = 90 * 24

/** REST validates the body against the contract; MCP and Slack arguments are checked here too. */
function settingsOf (input: CreateInviteLinkInput): Required<CreateInviteLinkInput> {
  const hours = input.expiresInHours ?? DEFAULT_HOURS
  const maxUses = input.maxUses ?? null
  if (!Number.isInteger(hours) || hours < 1 || hours > MAX_HOURS) {
    throw serviceError('VALIDATION_FAILED', ['expiresInHours must be from 1 to 2160'],
      { errors: [{ in: 'body', field: 'expiresInHours', message: 'must be from 1 to 2160' }] })
  }
  if (maxUses !== null && (!Number.isInteger(maxUses) || maxUses < 1)) {
    throw serviceError('VALIDATION_FAILED', ['maxUses must be a positive integer or null'],
      { errors: [{ in: 'body', field: 'maxUses', message: 'must be a positive integer or null' }] })
  }
  const domains = [...new Set((input.allowedDomains ?? []).map(d => d.trim().toLowerCase()))]
  const name = input.name?.trim() ?? ''
  if (name.length > 100) {
    throw serviceError('VALIDATION_FAILED', ['name must have at most 100 characters'],
      { errors: [{ in: 'body', field: 'name', message: 'must have at most 100 characters' }] })
  }
  const locale = input.locale ?? null
  if (locale !== null && !isLanguageTag(locale)) {
    throw serviceError('VALIDATION_FAILED', ['locale must be a BCP 47 language tag such as ja or de-CH'],
      { errors: [{ in: 'body', field: 'locale', message: 'must be a BCP 47 language tag such as ja or de-CH' }] })
  }
  return {
    name: name === '' ? null : name,
    maxUses,
    expiresInHours: hours,
    allowedDomains: domains,
    requiresApproval: input.requiresApproval ?? false,
    locale
  }
}

type Action = 'invite_link.created' | 'invite_link.revoked' | 'invite_link.regenerated'

/** The event names the link and its settings; never its code or URL. */
function auditLink (deps: InviteLinkDeps, tx: Parameters<typeof insertInviteLink>[0], actor: Principal,
  action: Action, row: InviteLinkRow, now: Date): Promise<void> {
  const settings = action === 'invite_link.created'
    ? {
        role: row.role,
        maxUses: row.maxUses,
        expiresAt: new Date(row.expiresAt).toISOString(),
        allowedDomains: row.allowedDomains,
        requiresApproval: row.requiresApproval
      }
    : {}
  // Its name, on every event of the link: what Activity shows it by.
  const payload = row.name === null ? settings : { name: row.name, ...settings }
  return auditPrincipalAction(deps.events, tx, actor, {
    action, target: { type: 'invite_link', id: row.id }, payload, now
  })
}

export async function createInviteLink (
  deps: InviteLinkDeps, actor: Principal, input: CreateInviteLinkInput
): Promise<InviteLinkCreated> {
  const s = settingsOf(input)
  const code = randomToken(CODE_BYTES)
  try {
    return await insertAndAudit(deps, actor, s, code)
  } catch (err) {
    // The actor's workspace was deleted after it was authenticated: 401, as every service answers.
    if (isForeignKeyViolation(err)) throw workspaceGone()
    throw err
  }
}

async function insertAndAudit (
  deps: InviteLinkDeps, actor: Principal, s: Required<CreateInviteLinkInput>, code: string
): Promise<InviteLinkCreated> {
  return await deps.db.transaction(async tx => {
    const now = deps.clock.now()
    const row = await insertInviteLink(tx, {
      workspaceId: actor.workspaceId,
      codeHash: hashToken(code),
      name: s.name,
      maxUses: s.maxUses,
      allowedDomains: s.allowedDomains,
      requiresApproval: s.requiresApproval,
      locale: s.locale,
      expiresAt: new Date(now.getTime() + s.expiresInHours * HOUR_MS),
      createdBy: actor.userId,
      now
    })
    await auditLink(deps, tx, actor, 'invite_link.created', row, now)
    return { ...inviteLinkView(row, now), url: joinUrl(deps, code) }
  })
}

export async function listInviteLinkPage (
  deps: InviteLinkDeps, actor: Principal, q: { limit: number, cursor?: string }
): Promise<{ items: InviteLinkView[], nextCursor: string | null }> {
  const before = q.cursor !== undefined ? decodeCursor(q.cursor) : undefined
  const rows = await listInviteLinks(deps.db, { workspaceId: actor.workspaceId, limit: q.limit + 1, before })
  const { page, nextCursor } = pageOf(rows, q.limit, r => ({ createdAt: new Date(r.createdAt), id: r.id }))
  const now = deps.clock.now()
  return { items: page.map(r => inviteLinkView(r, now)), nextCursor }
}

/** Revoke a live link of the actor's workspace (NOT_FOUND otherwise): its code stops working at once. */
export async function revokeLink (deps: InviteLinkDeps, actor: Principal, linkId: string): Promise<InviteLinkView> {
  if (!isUuid(linkId)) throw serviceError('NOT_FOUND', ['Invite link'])
  return await deps.db.transaction(async tx => {
    const now = deps.clock.now()
    const row = await revokeInviteLink(tx, actor.workspaceId, linkId, now)
    if (row === null) throw serviceError('NOT_FOUND', ['Invite link'])
    await auditLink(deps, tx, actor, 'invite_link.revoked', row, now)
    return inviteLinkView(row, now)
  })
}

/** A new code for a live link; the old code (and confirmations sent through it) die in the same UPDATE. */
export async function regenerateLink (
  deps: InviteLinkDeps, actor: Principal, linkId: string
): Promise<InviteLinkCreated> {
  if (!isUuid(linkId)) throw serviceError('NOT_FOUND', ['Invite link'])
  const code = randomToken(CODE_BYTES)
  return await deps.db.transaction(async tx => {
    const now = deps.clock.now()
    const row = await replaceInviteLinkCode(tx, actor.workspaceId, linkId, hashToken(code), now)
    if (row === null) throw serviceError('NOT_FOUND', ['Invite link'])
    await auditLink(deps, tx, actor, 'invite_link.regenerated', row, now)
    return { ...inviteLinkView(row, now), url: joinUrl(deps, code) }
  })
}
