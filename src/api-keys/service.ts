import type { components } from '../generated/openapi.js'
import { randomInt } from 'node:crypto'
import type { Ports } from '../ports/index.js'
import type { Queryable } from '../db/client.js'
import type { EventOutbox } from '../ports/event-outbox.js'
import {
  countLiveApiKeysLocked, findLiveApiKeyByPrefix, insertApiKey, listActiveApiKeys, revokeApiKey, touchApiKey,
  type ApiKeyRow
} from '../db/api-keys.js'
import { serviceError } from '../errors.js'
import { hashToken, randomToken, safeEqual } from '../lib/tokens.js'
import { auditPrincipalAction } from '../audit/actor.js'
import type { Principal } from '../principal.js'

// API keys: `wsk_<12 lower-case alphanumerics>_<43 base64url chars = 32 random bytes>`. The first
// 16 characters (`wsk_` + id part) are the stored, listed and looked-up prefix; the database keeps
// only the SHA-256 of the whole key. A key acts in its workspace with the scopes it was given, while
// the admin who created it is still an active admin there and until it expires; audit rows and
// events name the key itself as the actor. The directory's key (scope `scim` and no other) belongs
// to the workspace instead: it outlives its creator's role and membership and ends only when an
// admin revokes it (or it expires). A key holding `scim` beside other scopes is an ordinary key.

const KEY_PATTERN = /^(wsk_[0-9a-z]{12})_[A-Za-z0-9_-]{43}$/
const PREFIX_ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz'
/** The directory's key holds the `scim` scope alone; it belongs to the workspace, not to its creator. */
function isDirectoryKey (scopes: readonly string[]): boolean {
  return scopes.length === 1 && scopes[0] === 'scim'
}
/** last_used_at is written at most this often per key (it is shown to admins, not used for limits). */
const LAST_USED_RESOLUTION_MS = 60_000
/** The furthest ahead a key's expiry may be set: a little over a year. */
const MAX_EXPIRY_MS = 366 * 24 * 60 * 60 * 1000

/** A key as the contract's ApiKey schema shows it (never the secret or its hash). */
type ApiKeyView = components['schemas']['ApiKey']
type CreateApiKeyInput = components['schemas']['CreateApiKeyRequest']

export interface ApiKeyService {
  /** Creates a key for the actor's workspace; `secret` is the whole key, returned only here. */
  create(actor: Principal, input: CreateApiKeyInput): Promise<components['schemas']['ApiKeyCreated']>
  list(actor: Principal): Promise<ApiKeyView[]>
  /** Revokes a live key of the actor's workspace (NOT_FOUND otherwise); effective at once. */
  revoke(actor: Principal, apiKeyId: string): Promise<void>
  /**
   * The principal a presented key acts as (its door `api`; the MCP endpoint says `mcp`), or null
   * when it is not a live, unexpired key whose creator is an active admin of its workspace.
   */
  authenticate(key: string): Promise<Principal | null>
}

function apiKeyView (k: ApiKeyRow): ApiKeyView {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    createdBy: k.createdBy,
    createdByEmail: k.createdByEmail,
    createdAt: k.createdAt.toISOString(),
    lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
    scopes: k.scopes as ApiKeyView['scopes'],
    expiresAt: k.expiresAt?.toISOString() ?? null
  }
}

/** A key's expiry: after now and at most MAX_EXPIRY_MS ahead (the contract checks the format). */
function expiryOf (expiresAt: string | undefined, now: Date): Date | null {
  if (expiresAt === undefined) return null
  const at = new Date(expiresAt)
  const ms = at.getTime() - now.getTime()
  if (ms > 0 && ms <= MAX_EXPIRY_MS) return at
  const message = ms <= 0 ? 'must be in the future' : 'must be at most 366 days ahead'
  throw serviceError(
    'VALIDATION_FAILED', [`body.expiresAt ${message}`], { errors: [{ in: 'body', field: 'expiresAt', message }] }
  )
}

/** The prefix is shown in every key list; the secret and its hash never leave the row. */
async function auditApiKey (
  events: EventOutbox, q: Queryable, actor: Principal, action: 'api_key.created' | 'api_key.revoked', row: ApiKeyRow,
  now: Date
): Promise<void> {
  await auditPrincipalAction(events, q, actor, {
    action, target: { type: 'api_key', id: row.id }, payload: { name: row.name, prefix: row.prefix }, now
  })
}

function newPrefix (): string {
  let id = ''
  for (let i = 0; i < 12; i++) id += PREFIX_ALPHABET[randomInt(PREFIX_ALPHABET.length)]
  return `wsk_${id}`
}

export function createApiKeyService (
  deps: Pick<Ports, 'db' | 'clock' | 'events' | 'config'>
): ApiKeyService {
  const { db, clock } = deps
  const maxPerWorkspace = deps.config.apiKeysPerWorkspace
  return {
    async create (actor, input) {
      const expiresAt = expiryOf(input.expiresAt, clock.now())
      const scopes = [...new Set(input.scopes)]
      const prefix = newPrefix()
      const secret = `${prefix}_${randomToken(32)}`
      return await db.transaction(async tx => {
        if (await countLiveApiKeysLocked(
          tx, actor.workspaceId
        ) >= maxPerWorkspace) throw serviceError('API_KEY_LIMIT_REACHED', [maxPerWorkspace])
        const now = clock.now()
        const row = await insertApiKey(
          tx,
          {
            workspaceId: actor.workspaceId,
            createdBy: actor.userId,
            name: input.name,
            prefix,
            secretHash: hashToken(secret),
            now,
            scopes,
            expiresAt
          }
        )
        await auditApiKey(deps.events, tx, actor, 'api_key.created', row, now)
        return { ...apiKeyView(row), secret }
      })
    },

    async list (actor) {
      return (await listActiveApiKeys(db, actor.workspaceId)).map(apiKeyView)
    },

    async revoke (actor, apiKeyId) {
      await db.transaction(async tx => {
        const now = clock.now()
        // Scoped to the actor's workspace: another workspace's key is as absent as an unknown one.
        const row = await revokeApiKey(tx, actor.workspaceId, apiKeyId, now)
        if (row === null) throw serviceError('NOT_FOUND', ['API key'])
        await auditApiKey(deps.events, tx, actor, 'api_key.revoked', row, now)
      })
    },

    async authenticate (key) {
      const m = KEY_PATTERN.exec(key)
      if (m === null) return null
      const found = await findLiveApiKeyByPrefix(db, m[1] as string)
      // The prefix is not secret; the hash comparison is the check, and it is constant-time.
      if (found === null || !safeEqual(found.secretHash, hashToken(key))) return null
      const now = clock.now()
      if (found.expiresAt !== null && found.expiresAt.getTime() <= now.getTime()) return null
      const u = found.creator
      const workspaceKey = isDirectoryKey(found.scopes)
      // Read on every request, so demoting, disabling or removing the creator stops the key at once
      // (not the directory's key: it belongs to the workspace).
      if (!workspaceKey && (
        u === null || u.status !== 'active' || u.role !== 'admin' || u.workspaceId !== found.workspaceId
      )) return null
      if (found.lastUsedAt === null || now.getTime() - found.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
        await touchApiKey(db, found.id, now, LAST_USED_RESOLUTION_MS)
      }
      return {
        kind: 'apiKey',
        // The directory's key acts for no person: its creator is only on record.
        userId: u?.id ?? '',
        workspaceId: found.workspaceId,
        email: u?.email ?? '',
        name: u?.name ?? null,
        role: workspaceKey ? 'member' : (u?.role ?? 'member'),
        sessionId: null,
        apiKeyId: found.id,
        key: { name: found.name, scopes: found.scopes, door: 'api' },
        requestId: null
      }
    }
  }
}
