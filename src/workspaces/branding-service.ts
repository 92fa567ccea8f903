import { createHash } from 'node:crypto'
import type { Ports } from '../ports/index.js'
import { workspaceGone, type Principal } from '../principal.js'
import type { components } from '../generated/openapi.js'
import type { Queryable } from '../db/client.js'
import {
  findLogoBySha256, findWorkspaceLook, updateWorkspaceBranding, type LogoMediaType
} from '../db/workspace-branding.js'
import { auditPrincipalAction } from '../audit/actor.js'
import { serviceError } from '../errors.js'
import { logoPath } from './branding.js'
import { AA_CONTRAST, contrastRatio, formatRatio } from './contrast.js'
import { sniffLogo } from './logo.js'

// What an admin sets of the workspace's look (issue 54, item 4), checked before it is stored: an
// accent colour must reach WCAG AA against white (button text on it, links in it on white), a logo
// must be, by content, the PNG, JPEG or WebP it was sent as. Changes are audited with what they
// replaced (a logo by its hash), in the same transaction. How e-mails and pages read it: branding.ts.

type WorkspaceBranding = components['schemas']['WorkspaceBranding']
type WorkspaceBrandingPatch = components['schemas']['WorkspaceBrandingPatch']

export interface WorkspaceBrandingService {
  get(actor: Principal): Promise<WorkspaceBranding>
  update(actor: Principal, patch: WorkspaceBrandingPatch): Promise<WorkspaceBranding>
  /** The logo's bytes as sent and the media type they were sent as (Content-Type). */
  putLogo(actor: Principal, bytes: Buffer, declaredType: string): Promise<WorkspaceBranding>
  removeLogo(actor: Principal): Promise<WorkspaceBranding>
  /** A logo by its public name (`<sha256>.<ext>`); null: no workspace has it now. */
  logo(file: string): Promise<{ bytes: Buffer, mediaType: LogoMediaType } | null>
}

const TYPE_NAMES: Readonly<Record<LogoMediaType, string>> = {
  'image/png': 'PNG', 'image/jpeg': 'JPEG', 'image/webp': 'WebP'
}

/** A text field as stored: surrounding spaces dropped; nothing left is a 400. */
function trimmed (field: 'displayName' | 'senderName', value: string | null | undefined): string | null | undefined {
  if (value === undefined || value === null) return value
  const text = value.trim()
  if (text === '') {
    const message = 'must have 1 to 100 characters besides spaces'
    throw serviceError('VALIDATION_FAILED', [`body.${field} ${message}`],
      { errors: [{ in: 'body', field, message }] })
  }
  return text
}

/** The colour as stored (lowercase), refused below AA with the ratio it reached. */
function accentOf (color: string | null | undefined): string | null | undefined {
  if (color === undefined || color === null) return color
  const hex = color.toLowerCase()
  const ratio = contrastRatio(hex, '#ffffff')
  if (ratio < AA_CONTRAST) {
    const reached = formatRatio(ratio)
    const error = serviceError('ACCENT_COLOR_CONTRAST_TOO_LOW', [hex, reached])
    error.details = {
      in: 'body',
      field: 'accentColor',
      contrast: { accentColor: hex, against: '#ffffff', ratio: Math.floor(ratio * 100) / 100, required: AA_CONTRAST }
    }
    throw error
  }
  return hex
}

/** The logo's bytes checked by content against what they were sent as. */
function checkedLogo (bytes: Buffer, declaredType: string): LogoMediaType {
  const sniffed = sniffLogo(bytes)
  if (sniffed.kind === 'svg') {
    throw serviceError('LOGO_NOT_ACCEPTED', ['This is an SVG image; upload a PNG, JPEG or WebP'], { reason: 'svg' })
  }
  if (sniffed.kind === 'other') {
    throw serviceError('LOGO_NOT_ACCEPTED', ['This file is not a PNG, JPEG or WebP image'], { reason: 'not_an_image' })
  }
  if (sniffed.mediaType !== declaredType) {
    throw serviceError('LOGO_NOT_ACCEPTED', [
      `This file is a ${TYPE_NAMES[sniffed.mediaType]} image, not ${declaredType}: send it as ${sniffed.mediaType}`
    ], { reason: 'type_mismatch', detectedType: sniffed.mediaType })
  }
  return sniffed.mediaType
}

export function createWorkspaceBrandingService (
  { db, clock, events, config }: Pick<Ports, 'db' | 'clock' | 'events' | 'config'>
): WorkspaceBrandingService {
  async function read (q: Queryable, workspaceId: string): Promise<WorkspaceBranding> {
    const look = await findWorkspaceLook(q, workspaceId)
    if (look === null) throw workspaceGone()
    return {
      displayName: look.displayName,
      accentColor: look.accentColor,
      senderName: look.senderName,
      logo: look.logoSha256 !== null && look.logoMediaType !== null && look.logoSize !== null
        ? {
            url: `${config.appUrl}${logoPath(look.logoSha256, look.logoMediaType)}`,
            sha256: look.logoSha256,
            mediaType: look.logoMediaType,
            size: look.logoSize
          }
        : null
    }
  }

  /** Applies `change`, audits what it replaced, answers the look after it. */
  async function change (
    actor: Principal, patch: Parameters<typeof updateWorkspaceBranding>[2]
  ): Promise<WorkspaceBranding> {
    return await db.transaction(async tx => {
      await read(tx, actor.workspaceId)
      const before = await updateWorkspaceBranding(tx, actor.workspaceId, patch, clock.now())
      const after = await read(tx, actor.workspaceId)
      const changed: Record<string, { from: string | null, to: string | null }> = {}
      for (const field of ['displayName', 'accentColor', 'senderName'] as const) {
        if (before[field] !== after[field]) changed[field] = { from: before[field], to: after[field] }
      }
      if (before.logoSha256 !== (after.logo?.sha256 ?? null)) {
        changed.logo = { from: before.logoSha256, to: after.logo?.sha256 ?? null }
      }
      if (Object.keys(changed).length > 0) {
        await auditPrincipalAction(events, tx, actor, {
          action: 'workspace.branding_changed',
          target: { type: 'workspace', id: actor.workspaceId },
          payload: changed,
          now: clock.now()
        })
      }
      return after
    })
  }

  return {
    get: async actor => await read(db, actor.workspaceId),
    async update (actor, patch) {
      const displayName = trimmed('displayName', patch.displayName)
      const senderName = trimmed('senderName', patch.senderName)
      const accentColor = accentOf(patch.accentColor)
      return await change(actor, {
        ...(displayName !== undefined ? { displayName } : {}),
        ...(senderName !== undefined ? { senderName } : {}),
        ...(accentColor !== undefined ? { accentColor } : {})
      })
    },
    async putLogo (actor, bytes, declaredType) {
      const mediaType = checkedLogo(bytes, declaredType)
      const sha256 = createHash('sha256').update(bytes).digest('hex')
      return await change(actor, { logo: { bytes, sha256, mediaType } })
    },
    removeLogo: async actor => await change(actor, { logo: null }),
    async logo (file) {
      const sha256 = file.slice(0, file.indexOf('.'))
      const found = await findLogoBySha256(db, sha256)
      // The extension must be the logo's own: one URL per logo.
      return found !== null && logoPath(sha256, found.mediaType) === `/branding/logos/${file}` ? found : null
    }
  }
}
