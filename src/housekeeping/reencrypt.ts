import type { Ports } from '../ports/index.js'
import type { ResealCount } from '../lib/reseal.js'
import { resealIdempotencyAnswers } from '../idempotency/idempotency.js'
import { resealInvitationLinks } from '../invitations/link-seal.js'
import { resealSigningSecrets } from '../webhooks/secrets.js'
import { resealBotTokens } from '../slack/install.js'
import { resealClientSecrets } from '../sso/connection-secret.js'
import { resealSigningKeys } from '../audit/digests.js'
import { resealStreamCredentials } from '../audit-streams/credentials.js'

// Everything stored under a key derived from a secret, re-encrypted under the current one
// (npm run secrets:reencrypt, docs/operating.md "Rotating secrets"). What cannot be rewritten —
// session cookies in browsers, return paths in e-mails already sent — is not stored here: it
// keeps working while the old secret is listed as previous, and stops when it is dropped.

export async function reencryptStored (deps: Pick<Ports, 'db' | 'config'>): Promise<ResealCount[]> {
  const counts = [
    await resealIdempotencyAnswers(deps),
    await resealInvitationLinks(deps),
    await resealSigningSecrets(deps.db, deps.config),
    await resealClientSecrets(deps.db, deps.config),
    await resealSigningKeys(deps.db, deps.config),
    await resealStreamCredentials(deps.db, deps.config)
  ]
  const botTokens = await resealBotTokens(deps.db, deps.config)
  if (botTokens !== null) counts.push(botTokens)
  return counts
}
