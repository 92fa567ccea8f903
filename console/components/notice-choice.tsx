import { useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api.js'
import { announce } from '../announce.js'
import { ProblemNote } from './problem-note.js'
import { useCall } from '../hooks/use-call.js'
import { screenWordsOf } from '../i18n.js'
import type own from '../../src/i18n/catalogues/en/console-profile.json'

// Its words: the Profile screen's (console-profile.json), the one screen that shows it.
const { t } = screenWordsOf<typeof own>('profile')

type Channel = Schemas['NotificationSettings']['inviteRequests']

const CHANNELS: Channel[] = ['email', 'slack', 'off']

/** The admin's own choice of how they hear of new invite requests (GET/PUT /api/users/me/notifications). */
export function NoticeChoice () {
  const { data, problem, reload, setData } = useCall(async () => await call(api.GET('/api/users/me/notifications')), [])
  // Slack is offered only where the workspace has it: elsewhere the service tells by e-mail.
  const settings = useCall(async () => await call(api.GET('/api/workspace/settings')), [])
  const slack = settings.data?.slack.installed === true
  const [saveProblem, setSaveProblem] = useState<Problem | null>(null)
  const choose = async (c: Channel) => {
    const r = await call(api.PUT('/api/users/me/notifications', { body: { inviteRequests: c } }))
    setSaveProblem(r.ok ? null : r.problem)
    if (r.ok) { setData(r.data); announce(t('noticeSaved', { channel: c })) } else announce(r.problem.text)
  }
  return (
    <fieldset class='card' id='notices'>
      <legend>{t('noticeLegend')}</legend>
      <ProblemNote problem={problem} retry={reload} />
      {data !== null && settings.data !== null && CHANNELS.map(c => (
        <label key={c} class='check'>
          <input
            type='radio' name='inviteRequests' value={c} checked={data.inviteRequests === c}
            disabled={c === 'slack' && !slack} aria-describedby={c === 'slack' && !slack ? 'no-slack' : undefined}
            onChange={() => { void choose(c) }}
          /> {t('noticeChannel', { channel: c })}
        </label>
      ))}
      {settings.data !== null && !slack && <p class='reason' id='no-slack'>{t('noticeNoSlack')}</p>}
      <ProblemNote problem={settings.problem} retry={settings.reload} />
      <ProblemNote problem={saveProblem} />
      <p class='muted'>{t('noticeHourly')}</p>
    </fieldset>
  )
}
