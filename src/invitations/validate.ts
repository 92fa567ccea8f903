import { isEmailAddress } from '../lib/email.js'

// create-admin's argument rules: the one e-mail rule of every entry point (src/lib/email.ts, the
// contract's format email, at most 254 characters) and the workspaces.name column (1 to 200
// characters). Light imports only, so the script can check its arguments before loading anything heavy.

/** null when fine; otherwise one line naming the bad argument. */
export function validateFirstAdminInput (input: { email: string, workspaceName: string }): string | null {
  if (!isEmailAddress(input.email)) return `--email must be an e-mail address (got ${JSON.stringify(input.email)})`
  const name = input.workspaceName.trim()
  if (name.length < 1 || name.length > 200) return '--workspace must be a name of 1 to 200 characters'
  return null
}
