import { useEffect, useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api.js'
import type { ScreenProps } from '../main.js'
import { ProblemNote } from '../ui.js'

// What a member may do under each invite policy (GET /api/workspace tells any member the policy).
const MEMBER_MAY: Record<Schemas['InvitePolicy'], string> = {
  admins: 'In this workspace only admins invite people: ask an admin.',
  request: 'In this workspace members ask for invitations in Slack with /invite; an admin approves or denies each request, and Slack tells you the outcome.',
  members: 'In this workspace members may invite members: use /invite in Slack (only admins invite admins).'
}

// Everyone's first screen: who is signed in, in which workspace, and the way out.
export function Profile ({ me }: ScreenProps) {
  const [problem, setProblem] = useState<Problem | null>(null)
  const [policy, setPolicy] = useState<Schemas['InvitePolicy'] | null>(null)
  useEffect(() => {
    if (me.user.role !== 'member') return
    void call(api.GET('/api/workspace')).then(r => { if (r.ok) setPolicy(r.data.invitePolicy); else setProblem(r.problem) })
  }, [me.user.role])
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
        <p id='member-may' class='muted'>
          Admins invite people and manage the workspace. {policy === null ? '' : MEMBER_MAY[policy]}
        </p>
      )}
      <ProblemNote problem={problem} />
      <button id='logout' type='button' onClick={signOut}>Sign out</button>
    </section>
  )
}
