import { useEffect, useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api.js'
import type { ScreenProps } from '../main.js'
import { announce, ProblemNote } from '../ui.js'

const POLICIES: Array<{ value: Schemas['InvitePolicy'], text: string }> = [
  { value: 'admins', text: 'Only admins invite' },
  { value: 'request', text: 'Members ask (in Slack), admins approve or deny' },
  { value: 'members', text: 'Members may invite members; only admins invite admins' }
]

export function Settings ({ me }: ScreenProps) {
  const [settings, setSettings] = useState<Schemas['WorkspaceSettings'] | null>(null)
  const [problem, setProblem] = useState<Problem | null>(null)
  const load = () => {
    void call(api.GET('/api/workspace/settings')).then(r => { if (r.ok) { setSettings(r.data); setProblem(null) } else setProblem(r.problem) })
  }
  useEffect(load, [])
  const choose = async (invitePolicy: Schemas['InvitePolicy']) => {
    const r = await call(api.PATCH('/api/workspace/settings', { body: { invitePolicy } }))
    if (r.ok) { setSettings(r.data); setProblem(null); announce(`Invite policy saved: ${POLICIES.find(p => p.value === invitePolicy)?.text ?? invitePolicy}.`) } else { setProblem(r.problem); announce(r.problem.text) }
  }
  return (
    <>
      <section class='card' aria-labelledby='ws-title'>
        <h2 id='ws-title'>Workspace</h2>
        <dl><dt>Name</dt><dd>{me.workspace.name}</dd><dt>Id</dt><dd><code>{me.workspace.id}</code></dd></dl>
      </section>
      <ProblemNote problem={problem} retry={load} />
      {settings !== null && (
        <fieldset class='card'>
          <legend>Who may invite</legend>
          {POLICIES.map(p => (
            <label key={p.value} class='check'>
              <input type='radio' name='invitePolicy' value={p.value} checked={settings.invitePolicy === p.value} onChange={() => { void choose(p.value) }} /> {p.text}
            </label>
          ))}
        </fieldset>
      )}
      <section class='card' aria-labelledby='slack-title'>
        <h2 id='slack-title'>Slack</h2>
        <p>Install the bot in your Slack workspace to invite and ask for invitations from Slack.</p>
        <p><a href='/api/oauth/slack/install'>Install in Slack</a></p>
      </section>
    </>
  )
}
