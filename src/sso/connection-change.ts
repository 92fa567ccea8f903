import { randomUUID } from 'node:crypto'
import type { components } from '../generated/openapi.js'
import { requireAdminScope, workspaceGone, type Principal } from '../principal.js'
import type { Queryable } from '../db/client.js'
import type { AuditAction } from '../db/audit-events.js'
import { isForeignKeyViolation, isUniqueViolation } from '../db/errors.js'
import {
  deleteSsoConnection, insertSsoConnection, setConnectionDomains, updateSsoConnection,
  type OidcColumns, type SamlColumns, type SsoConnectionFields, type SsoConnectionRow
} from '../db/sso-connections.js'
import { auditPrincipalAction } from '../audit/actor.js'
import { serviceError } from '../errors.js'
import {
  connectionOr404, connectionView, type SsoConnectionDeps, type SsoConnectionView
} from './connection-context.js'
import {
  checkFetchedUrl, checkIssuer, checkMetadataUrl, domainTaken, invalidField, parsedCertificates, servedDomainIds
} from './connection-settings.js'
import { sealClientSecret } from './connection-secret.js'

// Creating, changing and deleting a connection. Every check that needs no database runs before
// the transaction (the address policy resolves names); the domains are checked inside it, and
// the audit event (never a secret: the names of the fields changed) is written with the change.

type Schemas = components['schemas']
type CreateInput = Schemas['CreateSsoConnectionRequest']
type UpdateInput = Schemas['UpdateSsoConnectionRequest']

/** Accounts and role as the row keeps them: a role only when accounts are created at first sign-in. */
function accountsOf (
  accounts: SsoConnectionFields['accounts'], given: 'admin' | 'member' | undefined, current: 'admin' | 'member' | null
): Pick<SsoConnectionFields, 'accounts' | 'defaultRole'> {
  if (accounts === 'existing') {
    if (given !== undefined) throw invalidField('defaultRole', 'applies only when accounts is create')
    return { accounts, defaultRole: null }
  }
  return { accounts, defaultRole: given ?? current ?? 'member' }
}

async function checkedOidc (
  deps: SsoConnectionDeps, id: string, o: { issuer: string, clientId: string, tenantId: string | null },
  secret: { plain: string } | { sealed: string }, issuerChanged: boolean
): Promise<OidcColumns> {
  checkIssuer(o.issuer, o.tenantId)
  if (issuerChanged) await checkFetchedUrl(deps, 'oidc.issuer', o.issuer)
  const clientSecretEnc = 'plain' in secret ? sealClientSecret(deps.key, id, secret.plain) : secret.sealed
  return { issuer: o.issuer, clientId: o.clientId, clientSecretEnc, tenantId: o.tenantId }
}

/** `url`: the metadata URL was given (its address is checked), and is new (it is fetched once, too). */
async function checkedSaml (
  deps: SsoConnectionDeps, s: SamlColumns, url: { given: boolean, changed: boolean }
): Promise<SamlColumns> {
  if ((s.metadataUrl === null) === (s.metadataXml === null)) {
    throw invalidField('saml', 'needs exactly one of idpMetadataUrl and idpMetadataXml')
  }
  if (url.given && s.metadataUrl !== null) await checkFetchedUrl(deps, 'saml.idpMetadataUrl', s.metadataUrl)
  if (url.changed && s.metadataUrl !== null) await checkMetadataUrl(deps, s.metadataUrl)
  return s
}

/** The connection's domains in the transaction, a race with another connection's claim included. */
async function serveDomains (
  q: Queryable, actor: Principal, connectionId: string, names: readonly string[]
): Promise<void> {
  const ids = await servedDomainIds(q, actor, connectionId, names)
  try {
    await setConnectionDomains(q, connectionId, ids)
  } catch (err) {
    if (isUniqueViolation(err)) throw domainTaken(names.join(', '), 'another connection')
    throw err
  }
}

async function audit (
  deps: SsoConnectionDeps, q: Queryable, actor: Principal, action: AuditAction, id: string,
  payload: Record<string, unknown>, now: Date
): Promise<void> {
  await auditPrincipalAction(deps.events, q, actor, { action, target: { type: 'sso_connection', id }, payload, now })
}

export async function createConnection (
  deps: SsoConnectionDeps, actor: Principal, input: CreateInput
): Promise<SsoConnectionView> {
  const other = input.protocol === 'oidc' ? 'saml' : 'oidc'
  if (input[other] !== undefined) throw invalidField(other, `is not a setting of an ${input.protocol} connection`)
  if (input[input.protocol] === undefined) {
    throw invalidField(input.protocol, `is required for an ${input.protocol} connection`)
  }
  const roles = accountsOf(input.accounts ?? 'existing', input.defaultRole, null)
  if (roles.defaultRole === 'admin') requireAdminScope(actor)
  const id = randomUUID()
  const oidc = input.oidc === undefined
    ? null
    : await checkedOidc(deps, id, { ...input.oidc, tenantId: input.oidc.tenantId ?? null },
      { plain: input.oidc.clientSecret }, true)
  const saml = input.saml === undefined
    ? null
    : await checkedSaml(deps, {
      metadataUrl: input.saml.idpMetadataUrl ?? null,
      metadataXml: input.saml.idpMetadataXml ?? null,
      certificates: parsedCertificates(input.saml.idpCertificates),
      entityId: input.saml.idpEntityId ?? null,
      ssoUrl: input.saml.idpSsoUrl ?? null,
      idpInitiated: input.saml.idpInitiated ?? false
    }, { given: true, changed: true })
  const fields: SsoConnectionFields = { name: input.name, ...roles, required: input.required ?? false, oidc, saml }
  const row = await deps.db.transaction(async tx => {
    const now = deps.clock.now()
    try {
      await insertSsoConnection(tx, {
        ...fields, id, workspaceId: actor.workspaceId, protocol: input.protocol, createdBy: actor.userId, now
      })
    } catch (err) {
      if (isForeignKeyViolation(err)) throw workspaceGone()
      throw err
    }
    await serveDomains(tx, actor, id, input.domains ?? [])
    await audit(deps, tx, actor, 'sso_connection.created', id, {
      name: fields.name,
      protocol: input.protocol,
      domains: input.domains ?? [],
      accounts: fields.accounts,
      required: fields.required
    }, now)
    return await connectionOr404(deps, actor, id, { q: tx })
  })
  return connectionView(deps.config.publicUrl, row)
}

/** The settings of the row's protocol after `change`, checked; the other protocol's stay null. */
async function changedSettings (
  deps: SsoConnectionDeps, row: SsoConnectionRow, change: UpdateInput
): Promise<Pick<SsoConnectionFields, 'oidc' | 'saml'>> {
  const other = row.protocol === 'oidc' ? 'saml' : 'oidc'
  if (change[other] !== undefined) throw invalidField(other, `is not a setting of an ${row.protocol} connection`)
  if (row.oidc !== null && change.oidc !== undefined) {
    const o = change.oidc
    const merged = {
      issuer: o.issuer ?? row.oidc.issuer,
      clientId: o.clientId ?? row.oidc.clientId,
      tenantId: o.tenantId === undefined ? row.oidc.tenantId : o.tenantId
    }
    const secret = o.clientSecret === undefined ? { sealed: row.oidc.clientSecretEnc } : { plain: o.clientSecret }
    return { oidc: await checkedOidc(deps, row.id, merged, secret, o.issuer !== undefined), saml: null }
  }
  if (row.saml !== null && change.saml !== undefined) {
    const s = change.saml
    if (s.idpMetadataUrl != null && s.idpMetadataXml != null) {
      throw invalidField('saml', 'needs exactly one of idpMetadataUrl and idpMetadataXml')
    }
    // A metadata URL given replaces pasted XML and the other way round.
    const metadataUrl = s.idpMetadataUrl !== undefined
      ? s.idpMetadataUrl
      : s.idpMetadataXml != null ? null : row.saml.metadataUrl
    const metadataXml = s.idpMetadataXml !== undefined
      ? s.idpMetadataXml
      : s.idpMetadataUrl != null ? null : row.saml.metadataXml
    return {
      oidc: null,
      saml: await checkedSaml(deps, {
        metadataUrl,
        metadataXml,
        certificates: s.idpCertificates === undefined ? row.saml.certificates : parsedCertificates(s.idpCertificates),
        entityId: s.idpEntityId === undefined ? row.saml.entityId : s.idpEntityId,
        ssoUrl: s.idpSsoUrl === undefined ? row.saml.ssoUrl : s.idpSsoUrl,
        idpInitiated: s.idpInitiated ?? row.saml.idpInitiated
      }, {
        given: s.idpMetadataUrl != null,
        changed: s.idpMetadataUrl != null && s.idpMetadataUrl !== row.saml.metadataUrl
      })
    }
  }
  return { oidc: row.oidc, saml: row.saml }
}

/** The names of the fields a change gives, nested ones dotted (never their values: a secret may be one). */
function changedFieldNames (change: UpdateInput): string[] {
  return Object.entries(change).flatMap(([k, v]) =>
    (k === 'oidc' || k === 'saml') && v !== null && typeof v === 'object' ? Object.keys(v).map(n => `${k}.${n}`) : [k])
}

/** A change checked against a row that another change replaced before this one could lock it. */
class Superseded extends Error {}

const sameSettings = (a: SsoConnectionRow, b: SsoConnectionRow): boolean =>
  JSON.stringify([a.oidc, a.saml]) === JSON.stringify([b.oidc, b.saml])

export async function updateConnection (
  deps: SsoConnectionDeps, actor: Principal, id: string, change: UpdateInput
): Promise<SsoConnectionView> {
  if (change.defaultRole === 'admin') requireAdminScope(actor)
  // The settings are checked outside the transaction (the address policy resolves names) against
  // the row as read; if another change lands before the lock, they are checked again on it.
  for (let attempt = 1; ; attempt++) {
    try {
      return await updateOnce(deps, actor, id, change, attempt < 3)
    } catch (err) {
      if (!(err instanceof Superseded)) throw err
    }
  }
}

async function updateOnce (
  deps: SsoConnectionDeps, actor: Principal, id: string, change: UpdateInput, mayRetry: boolean
): Promise<SsoConnectionView> {
  const current = await connectionOr404(deps, actor, id)
  const settings = await changedSettings(deps, current, change)
  const row = await deps.db.transaction(async tx => {
    const now = deps.clock.now()
    const locked = await connectionOr404(deps, actor, id, { forUpdate: true, q: tx })
    // What this change does not set is the locked row's. The protocol's settings it does set were
    // merged with the row as read: if another change replaced them meanwhile, they are merged
    // again. (Compared by content: two changes in one millisecond have the same updatedAt.)
    const touchesSettings = change.oidc !== undefined || change.saml !== undefined
    if (touchesSettings && mayRetry && !sameSettings(locked, current)) throw new Superseded()
    const fields: SsoConnectionFields = {
      name: change.name ?? locked.name,
      ...accountsOf(change.accounts ?? locked.accounts, change.defaultRole, locked.defaultRole),
      required: change.required ?? locked.required,
      ...(touchesSettings ? settings : { oidc: locked.oidc, saml: locked.saml })
    }
    await updateSsoConnection(tx, actor.workspaceId, id, fields, now)
    if (change.domains !== undefined) await serveDomains(tx, actor, id, change.domains)
    await audit(deps, tx, actor, 'sso_connection.updated', id, {
      name: fields.name,
      fields: changedFieldNames(change),
      ...(change.required !== undefined ? { required: change.required } : {})
    }, now)
    return await connectionOr404(deps, actor, id, { q: tx })
  })
  return connectionView(deps.config.publicUrl, row)
}

export async function removeConnection (deps: SsoConnectionDeps, actor: Principal, id: string): Promise<void> {
  const row = await connectionOr404(deps, actor, id)
  await deps.db.transaction(async tx => {
    const name = await deleteSsoConnection(tx, actor.workspaceId, row.id)
    if (name === null) throw serviceError('NOT_FOUND', ['SSO connection'])
    await audit(deps, tx, actor, 'sso_connection.deleted', row.id, { name, protocol: row.protocol }, deps.clock.now())
  })
}
