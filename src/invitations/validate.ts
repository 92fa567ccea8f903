// create-admin's argument rules, the same as the contract's InviteUserRequest.email (format
// email, at most 254 characters) and the workspaces.name column (1 to 200 characters). Kept
// free of imports so the script can check its arguments before loading anything heavy.

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/** null when fine; otherwise one line naming the bad argument. */
export function validateFirstAdminInput (input: { email: string, workspaceName: string }): string | null {
  const email = input.email.trim()
  if (email.length > 254 || !EMAIL.test(email)) return `--email must be an e-mail address (got ${JSON.stringify(input.email)})`
  const name = input.workspaceName.trim()
  if (name.length < 1 || name.length > 200) return '--workspace must be a name of 1 to 200 characters'
  return null
}
