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

const POLICIES: Array<{ value: Schemas['InvitePolicy'], text: string }> = [
  { value: 'admins', text: 'Only admins invite' },
  { value: 'request', text: 'Members ask (here or in Slack), admins approve or deny' },
  { value: 'members', text: 'Members may invite members; only admins invite admins' }
]

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
  if (!slack.available) return <p id='slack-state'>Not available: this service is not configured for Slack (its operator sets <code>SLACK_CLIENT_ID</code> and the rest).</p>
  const uninstall = async () => {
    const r = await call(api.DELETE('/api/workspace/slack'))
    if (r.ok || r.problem.code === 'NOT_FOUND') {
      setProblem(null)
      focusInstall.current = true
      announce('The Slack app was uninstalled: its token is revoked and the bot no longer answers.')
      onChange()
    } else { setProblem(r.problem); announce(r.problem.text) }
  }
  if (!slack.installed) {
    return (
      <>
        <p id='slack-state'>Not installed. Install the bot in your Slack workspace to invite and ask for invitations from Slack.</p>
        <p><a id='slack-install' ref={installLink} href='/api/oauth/slack/install'>Install in Slack</a></p>
      </>
    )
  }
  return (
    <>
      <p id='slack-state'>Installed in <strong>{slack.teamName ?? 'a Slack team'}</strong> since {when(slack.installedAt)}.</p>
      <ProblemNote problem={problem} />
      <p class='actions'>
        <a href='/api/oauth/slack/install'>Install again (another team, or new permissions)</a>{' '}
        <ConfirmButton label='Uninstall from Slack' confirm='Yes, uninstall: revoke the bot token' onConfirm={uninstall} />
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
        onSubmit={e => { e.preventDefault(); void save({ name }, s => `The workspace is now called ${s.name}.`).then(rename.fail) }}
      >
        <h2 id='ws-title'>Workspace</h2>
        <label for='ws-name'>Name</label>
        <input id='ws-name' required maxLength={200} value={name} {...rename.control('name', 'ws-name')} onInput={e => { setName(e.currentTarget.value) }} />
        {rename.error('name', 'ws-name')}
        <button type='submit'>Rename</button>
        {rename.note}
        <p class='muted'>Id <code>{me.workspace.id}</code></p>
      </form>
      <Look workspaceName={me.workspace.name} onChange={refresh} />
      {settings !== null && (
        <>
          <fieldset class='card'>
            <legend>Who may invite</legend>
            {POLICIES.map(p => (
              <label key={p.value} class='check'>
                <input
                  type='radio' name='invitePolicy' value={p.value} checked={settings.invitePolicy === p.value}
                  onChange={() => { void saveSetting({ invitePolicy: p.value }, () => `Invite policy saved: ${p.text}.`) }}
                /> {p.text}
              </label>
            ))}
          </fieldset>
          <section class='card' aria-labelledby='remind-title'>
            <h2 id='remind-title'>Invitation reminders</h2>
            <label for='remind-days'>Remind a pending invitation, once</label>
            <select
              id='remind-days' value={String(settings.invitationReminderDays ?? 'off')}
              onChange={e => {
                const v = e.currentTarget.value
                const days = v === 'off' ? null : Number(v)
                void saveSetting({ invitationReminderDays: days }, () => days === null ? 'Invitation reminders are off.' : `Pending invitations are reminded ${days} ${days === 1 ? 'day' : 'days'} before they expire.`)
              }}
            >
              <option value='off'>never</option>
              {[1, 2, 3, 4, 5, 6, 7].map(d => <option key={d} value={String(d)}>{d} {d === 1 ? 'day' : 'days'} before it expires</option>)}
            </select>
            <p class='muted'>With the link it already has; never to an accepted, revoked or expired one.</p>
          </section>
          <section class='card' aria-labelledby='slack-title'>
            <h2 id='slack-title'>Slack</h2>
            <Slack slack={settings.slack} onChange={reload} />
          </section>
          <section class='card' aria-labelledby='idp-title'>
            <h2 id='idp-title'>Single sign-on</h2>
            <p id='idp-state'>
              {!settings.identityProvider.available
                ? 'Not configured: members sign in with e-mailed links. The operator sets WORKOS_API_KEY and WORKOS_CLIENT_ID to offer sign-in through an identity provider.'
                : settings.identityProvider.organizationLinked
                  ? 'On: this workspace is linked to an organization of the identity provider; its members may sign in through it.'
                  : 'Available, but this workspace is not linked to an organization of the identity provider; members sign in with e-mailed links.'}
            </p>
            <p class='muted'>Read-only here: the identity provider is set up by the service's operator.</p>
          </section>
        </>
      )}
    </>
  )
}
