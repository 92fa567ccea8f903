import { useState } from 'preact/hooks'
import { api, call, type Problem } from '../api.js'
import type { ScreenProps } from '../main.js'
import { ProblemNote } from '../ui.js'

// Everyone's first screen: who is signed in, in which workspace, and the way out.
export function Profile ({ me }: ScreenProps) {
  const [problem, setProblem] = useState<Problem | null>(null)
  const signOut = async () => {
    const r = await call(api.POST('/api/auth/logout'))
    if (r.ok) location.assign('/')
    else setProblem(r.problem)
  }
  return (
    <section aria-labelledby='me-title'>
      <p id='status' class='muted'>Signed in as {me.user.email}</p>
      <h2 id='me-title'>Your profile</h2>
      <dl>
        <dt>E-mail</dt><dd id='me-email'>{me.user.email}</dd>
        <dt>Name</dt><dd id='me-name'>{me.user.name ?? '—'}</dd>
        <dt>Role</dt><dd id='me-role'>{me.user.role}</dd>
        <dt>Workspace</dt><dd id='me-workspace'>{me.workspace.name}</dd>
      </dl>
      {me.user.role === 'member' && (
        <p class='muted'>
          Admins invite people and manage the workspace. When your workspace lets members ask for
          invitations, ask in Slack with <code>/invite</code>; an admin approves or denies it.
        </p>
      )}
      <ProblemNote problem={problem} />
      <button id='logout' type='button' onClick={signOut}>Sign out</button>
    </section>
  )
}
