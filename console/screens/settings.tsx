import { useLayoutEffect, useRef, useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api.js'
import type { ScreenProps } from '../screen.js'
import { announce } from '../announce.js'
import { when } from '../format.js'
import { ConfirmButton } from '../components/confirm-button.js'
import { ProblemNote } from '../components/problem-note.js'
import { Look } from '../components/look.js'
import { useCall } from '../hooks/use-call.js'
import { useFormProblem } from '../hooks/use-form-problem.js'
import { screenWordsOf } from '../i18n.js'
import type own from '../../src/i18n/catalogues/en/console-settings.json'

const { t, tParts } = screenWordsOf<typeof own>('settings')

const POLICIES: Array<Schemas['InvitePolicy']> = ['admins', 'request', 'members']

/**
 * Slack: install (the OAuth round trip, GET /api/oauth/slack/install) or uninstall
 * (DELETE /api/workspace/slack, after a confirm step). After an uninstall the focus goes to the
 * install link that replaces the button.
 */
function Slack ({ slack, onChange }: { slack: Schemas['WorkspaceSettings']['slack'], onChange: () => void }) {
  const [problem, setProblem] = useState<Problem | null>(null)
  const installLink = useRef<HTMLAnchorElement>(null)
  const focusInstall = useRef(false)
  useLayoutEffect(() => {
    if (focusInstall.current && !slack.installed) { installLink.current?.focus(); focusInstall.current = false }
  }, [slack.installed])
  if (!slack.available) return <p id='slack-state'>{tParts('slackUnavailable', { variable: <code>SLACK_CLIENT_ID</code> })}</p>
  const uninstall = async () => {
    const r = await call(api.DELETE('/api/workspace/slack'))
    if (r.ok || r.problem.code === 'NOT_FOUND') {
      setProblem(null)
      focusInstall.current = true
      announce(t('slackUninstalled'))
      onChange()
    } else { setProblem(r.problem); announce(r.problem.text) }
  }
  if (!slack.installed) {
    return (
      <>
        <p id='slack-state'>{t('slackNotInstalled')}</p>
        <p><a id='slack-install' ref={installLink} href='/api/oauth/slack/install'>{t('slackInstall')}</a></p>
      </>
    )
  }
  return (
    <>
      <p id='slack-state'>{tParts('slackInstalled', { team: <strong>{slack.teamName ?? t('aSlackTeam')}</strong>, date: when(slack.installedAt) })}</p>
      <ProblemNote problem={problem} />
      <p class='actions'>
        <a href='/api/oauth/slack/install'>{t('slackInstallAgain')}</a>{' '}
        <ConfirmButton label={t('slackUninstall')} confirm={t('slackUninstallConfirm')} onConfirm={uninstall} />
      </p>
    </>
  )
}

export function Settings ({ me, refresh }: ScreenProps) {
  const { data: settings, problem, reload, setData: setSettings } = useCall(async () => await call(api.GET('/api/workspace/settings')), [])
  const [name, setName] = useState(me.workspace.name)
  const [saveProblem, setSaveProblem] = useState<Problem | null>(null)
  const rename = useFormProblem(['name'])
  const save = async (body: Schemas['WorkspaceSettingsPatch'], said: (s: Schemas['WorkspaceSettings']) => string) => {
    const r = await call(api.PATCH('/api/workspace/settings', { body }))
    if (r.ok) { setSettings(r.data); announce(said(r.data)); refresh() }
    return r.ok ? null : r.problem
  }
  const saveSetting = async (body: Schemas['WorkspaceSettingsPatch'], said: (s: Schemas['WorkspaceSettings']) => string) => {
    const p = await save(body, said)
    setSaveProblem(p)
    if (p !== null) announce(p.text)
  }
  return (
    <>
      <ProblemNote problem={problem} retry={reload} />
      <ProblemNote problem={saveProblem} />
      <form
        class='card' aria-labelledby='ws-title' ref={rename.form}
        onSubmit={e => { e.preventDefault(); void save({ name }, s => t('renamed', { name: s.name })).then(rename.fail) }}
      >
        <h2 id='ws-title'>{t('workspace')}</h2>
        <label for='ws-name'>{t('headName')}</label>
        <input id='ws-name' required maxLength={200} value={name} {...rename.control('name', 'ws-name')} onInput={e => { setName(e.currentTarget.value) }} />
        {rename.error('name', 'ws-name')}
        <button type='submit'>{t('rename')}</button>
        {rename.note}
        <p class='muted'>{tParts('workspaceId', { id: <code>{me.workspace.id}</code> })}</p>
      </form>
      <Look workspaceName={me.workspace.name} onChange={refresh} />
      {settings !== null && (
        <>
          <fieldset class='card'>
            <legend>{t('whoMayInvite')}</legend>
            {POLICIES.map(p => (
              <label key={p} class='check'>
                <input
                  type='radio' name='invitePolicy' value={p} checked={settings.invitePolicy === p}
                  onChange={() => { void saveSetting({ invitePolicy: p }, () => t('policySaved', { policy: p })) }}
                /> {t('policy', { policy: p })}
              </label>
            ))}
          </fieldset>
          <section class='card' aria-labelledby='remind-title'>
            <h2 id='remind-title'>{t('reminders')}</h2>
            <label for='remind-days'>{t('remindLabel')}</label>
            <select
              id='remind-days' value={String(settings.invitationReminderDays ?? 'off')}
              onChange={e => {
                const v = e.currentTarget.value
                const days = v === 'off' ? null : Number(v)
                void saveSetting({ invitationReminderDays: days }, () => days === null ? t('remindersOff') : t('remindersSaved', { days }))
              }}
            >
              <option value='off'>{t('remindNever')}</option>
              {[1, 2, 3, 4, 5, 6, 7].map(d => <option key={d} value={String(d)}>{t('remindDays', { days: d })}</option>)}
            </select>
            <p class='muted'>{t('remindHint')}</p>
          </section>
          <section class='card' aria-labelledby='slack-title'>
            <h2 id='slack-title'>Slack</h2>
            <Slack slack={settings.slack} onChange={reload} />
          </section>
          <section class='card' aria-labelledby='idp-title'>
            <h2 id='idp-title'>{t('singleSignOn')}</h2>
            <p id='idp-state'>
              {!settings.identityProvider.available
                ? tParts('idpNotConfigured', { key: <code>WORKOS_API_KEY</code>, client: <code>WORKOS_CLIENT_ID</code> })
                : t(settings.identityProvider.organizationLinked ? 'idpOn' : 'idpAvailable')}
            </p>
            <p class='muted'>{t('idpReadOnly')}</p>
          </section>
        </>
      )}
    </>
  )
}
