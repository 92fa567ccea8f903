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
      {data !== null && CHANNELS.map(c => (
        <label key={c.value} class='check'>
          <input
            type='radio' name='inviteRequests' value={c.value} checked={data.inviteRequests === c.value}
            onChange={() => { void choose(c) }}
          /> {c.text}
        </label>
      ))}
      <ProblemNote problem={saveProblem} />
      <p class='muted'>At most once an hour: requests that arrive within the hour after a notice come together when it ends.</p>
    </fieldset>
  )
}
