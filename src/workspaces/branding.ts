import type { Queryable } from '../db/client.js'
import { findWorkspaceLook, type LogoMediaType } from '../db/workspace-branding.js'
import { parseMailbox } from '../lib/email.js'

// The workspace's look as e-mails and pages before sign-in apply it (issue 54, item 4): the name
// they call it, its logo, its accent colour and the From name of its e-mails. What an admin sets
// and how it is checked: src/workspaces/branding-service.ts.

export interface Branding {
  /** What e-mails and pages call the workspace: its display name, else its name. */
  displayName: string
  /** Absolute URL of the logo the service serves (hashed name), or null. */
  logoUrl: string | null
  /** '#rrggbb', checked for WCAG AA contrast; null = the service's default accent. */
  accentColor: string | null
  /** The From name of its e-mails, e.g. "Acme via Workspace"; the address is unchanged. */
  senderName: string
}

/** The service's name in a sender name: MAIL_FROM's display name when it has one. */
const DEFAULT_SERVICE_NAME = 'Workspace'

const EXTENSIONS: Readonly<Record<LogoMediaType, string>> = {
  'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp'
}

/** The path a logo is served under: its content's hash, so a new logo is a new URL (cached forever). */
export function logoPath (sha256: string, mediaType: LogoMediaType): string {
  return `/branding/logos/${sha256}.${EXTENSIONS[mediaType]}`
}

/** "Acme via Workspace": what a sender name is when the workspace set none. */
function defaultSenderName (displayName: string, serviceName: string): string {
  // What a sender name may not hold (openapi.yaml: no `"`, `<`, `>`), the names it is made of may:
  // a workspace called `IT <it@corp.test>` must not show an address of its choosing as its From.
  const plain = (name: string) => name.replace(/["<>]/g, '').replace(/\s+/g, ' ').trim()
  return `${plain(displayName)} via ${plain(serviceName)}`
}

/**
 * The workspace's look; a workspace with nothing set gets its name, no logo, the default accent and
 * "<name> via <service>". `mailFrom` (MAIL_FROM) names the service; without a display name there,
 * "Workspace". A workspace that does not exist gets the service's name alone.
 */
export async function loadBranding (
  q: Queryable, workspaceId: string, appUrl: string, mailFrom?: string
): Promise<Branding> {
  const serviceName = (mailFrom !== undefined ? parseMailbox(mailFrom).name : null) ?? DEFAULT_SERVICE_NAME
  const look = await findWorkspaceLook(q, workspaceId)
  const displayName = look?.displayName ?? look?.name ?? serviceName
  return {
    displayName,
    logoUrl: look?.logoSha256 != null && look.logoMediaType !== null
      ? `${appUrl}${logoPath(look.logoSha256, look.logoMediaType)}`
      : null,
    accentColor: look?.accentColor ?? null,
    senderName: look?.senderName ?? defaultSenderName(displayName, serviceName)
  }
}
