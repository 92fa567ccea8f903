import { useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api.js'
import { announce } from '../announce.js'
import { ProblemNote } from './problem-note.js'
import { useCall } from '../hooks/use-call.js'

type Channel = Schemas['NotificationSettings']['inviteRequests']

const CHANNELS: Array<{ value: Channel, text: string }> = [
  { value: 'email', text: 'By e-mail' },
  { value: 'slack', text: 'In Slack (a direct message from the app, when Slack knows my address)' },
  { value: 'off', text: 'Not at all (the count in the navigation still shows them)' }
]

/** The admin's own choice of how they hear of new invite requests (GET/PUT /api/users/me/notifications). */
export function NoticeChoice () {
  const { data, problem, reload, setData } = useCall(async () => await call(api.GET('/api/users/me/notifications')), [])
  // Slack is offered only where the workspace has it: elsewhere the service tells by e-mail.
  const settings = useCall(async () => await call(api.GET('/api/workspace/settings')), [])
  const slack = settings.data?.slack.installed === true
  const [saveProblem, setSaveProblem] = useState<Problem | null>(null)
  const choose = async (c: { value: Channel, text: string }) => {
    const r = await call(api.PUT('/api/users/me/notifications', { body: { inviteRequests: c.value } }))
    setSaveProblem(r.ok ? null : r.problem)
    if (r.ok) { setData(r.data); announce(`Saved: new invite requests are told to you ${c.text.toLowerCase()}.`) } else announce(r.problem.text)
  }
  return (
    <fieldset class='card' id='notices'>
      <legend>Tell me of new invite requests</legend>
      <ProblemNote problem={problem} retry={reload} />
      {data !== null && settings.data !== null && CHANNELS.map(c => (
        <label key={c.value} class='check'>
          <input
            type='radio' name='inviteRequests' value={c.value} checked={data.inviteRequests === c.value}
            disabled={c.value === 'slack' && !slack} aria-describedby={c.value === 'slack' && !slack ? 'no-slack' : undefined}
            onChange={() => { void choose(c) }}
          /> {c.text}
        </label>
      ))}
      {settings.data !== null && !slack && <p class='reason' id='no-slack'>Slack is not connected to this workspace (Settings): requests are told by e-mail.</p>}
      <ProblemNote problem={settings.problem} retry={settings.reload} />
      <ProblemNote problem={saveProblem} />
      <p class='muted'>At most once an hour: requests that arrive within the hour after a notice come together when it ends.</p>
    </fieldset>
  )
}
