import { render } from 'preact'
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from './api.js'
import { ProblemNote } from './ui.js'
import { Members } from './screens/members.js'
import { Invitations } from './screens/invitations.js'
import { Requests } from './screens/requests.js'
import { InviteLinks } from './screens/invite-links.js'
import { ApiKeys } from './screens/api-keys.js'
import { Webhooks } from './screens/webhooks.js'
import { Activity } from './screens/activity.js'
import { Settings } from './screens/settings.js'
import { Domains } from './screens/domains.js'
import { Profile } from './screens/profile.js'
import { useLiveFeed } from './live.js'
import './console.css'

// The admin console: one page, a screen per path (/ and /console/{screen}), every call an
// operation of the contract. Admins see every screen; a member sees their profile.

export interface ScreenProps {
  me: Schemas['Me']
  news: number
  /** Read who is signed in again (after a change to the workspace, e.g. its name). */
  refresh: () => void
}

interface Screen {
  path: string
  title: string
  adminOnly: boolean
  view: (props: ScreenProps) => preact.JSX.Element
}

const SCREENS: Screen[] = [
  { path: '/', title: 'Profile', adminOnly: false, view: Profile },
  { path: '/console/members', title: 'Members', adminOnly: true, view: Members },
  { path: '/console/invitations', title: 'Invitations', adminOnly: true, view: Invitations },
  { path: '/console/invite-links', title: 'Invite links', adminOnly: true, view: InviteLinks },
  { path: '/console/requests', title: 'Invite requests', adminOnly: true, view: Requests },
  { path: '/console/api-keys', title: 'API keys', adminOnly: true, view: ApiKeys },
  { path: '/console/webhooks', title: 'Webhooks', adminOnly: true, view: Webhooks },
  { path: '/console/domains', title: 'Domains', adminOnly: true, view: Domains },
  { path: '/console/activity', title: 'Activity', adminOnly: true, view: Activity },
  { path: '/console/settings', title: 'Settings', adminOnly: true, view: Settings }
]

function screenAt (path: string): Screen {
  return SCREENS.find(s => s.path === path.replace(/\/$/, '') || (s.path === '/' && path === '/')) ?? SCREENS[0] as Screen
}

function usePath (): [string, (to: string) => void] {
  const [path, setPath] = useState(location.pathname)
  useEffect(() => {
    const back = () => { setPath(location.pathname) }
    addEventListener('popstate', back)
    return () => { removeEventListener('popstate', back) }
  }, [])
  return [path, to => { history.pushState(null, '', to); setPath(to) }]
}

type Who = { state: 'loading' } | { state: 'in', me: Schemas['Me'] } | { state: 'out' } | { state: 'problem', problem: Problem }

function App ({ identityProvider }: { identityProvider: boolean }) {
  const [who, setWho] = useState<Who>({ state: 'loading' })
  const [path, go] = usePath()
  const heading = useRef<HTMLHeadingElement>(null)
  const firstRender = useRef(true)

  const load = (quietly = false) => {
    if (!quietly) setWho({ state: 'loading' })
    void call(api.GET('/api/users/me')).then(r => {
      if (r.ok) setWho({ state: 'in', me: r.data })
      else setWho(r.problem.status === 401 ? { state: 'out' } : { state: 'problem', problem: r.problem })
    })
  }
  useEffect(() => { load() }, [])

  const me = who.state === 'in' ? who.me : null
  const admin = me?.user.role === 'admin'
  const screen = screenAt(path)
  const allowed = !screen.adminOnly || admin
  const news = useLiveFeed(admin)

  // In the same task as the render that shows the screen's heading (a layout effect, not an
  // effect that waits for the next frame): the title, the heading and the focus change together,
  // so nothing, a screen reader or a test, sees the new heading under the old title.
  useLayoutEffect(() => {
    document.title = me === null ? 'Workspace' : `${screen.title} · ${me.workspace.name}`
    // After a navigation (not the first load) the focus goes to the new screen's heading.
    if (!firstRender.current && me !== null) heading.current?.focus()
    if (me !== null) firstRender.current = false
  }, [screen, me])

  if (who.state === 'loading') return <main><p id='status' class='muted'>Checking who is signed in…</p></main>
  if (who.state === 'problem') {
    return <main><h1>Workspace</h1><p id='status' class='muted'>Could not load your account.</p><ProblemNote problem={who.problem} retry={() => { load() }} /></main>
  }
  if (who.state === 'out' || me === null) {
    return (
      <main>
        <h1>Workspace</h1>
        <p id='status' class='muted'>You are not signed in.</p>
        <div id='signed-out'>
          <p><a href='/login'>Sign in with an e-mail link</a></p>
          {identityProvider && <p><a href='/api/oauth/login'>Sign in with your organization</a></p>}
        </div>
      </main>
    )
  }
  const View = allowed ? screen.view : Profile
  return (
    <>
      <a class='skip' href='#main'>Skip to the screen</a>
      <header>
        <p class='brand'>{me.workspace.name}</p>
        <nav aria-label='Console'>
          <ul>
            {SCREENS.filter(s => !s.adminOnly || admin).map(s => (
              <li key={s.path}>
                <a
                  href={s.path} aria-current={s === screen ? 'page' : undefined}
                  onClick={e => { if (!e.ctrlKey && !e.metaKey) { e.preventDefault(); go(s.path) } }}
                >{s.title}
                </a>
              </li>
            ))}
          </ul>
        </nav>
      </header>
      <main id='main'>
        <h1 tabIndex={-1} ref={heading}>{allowed ? screen.title : 'Profile'}</h1>
        {!allowed && <p class='problem' role='alert'>{screen.title} is for admins of the workspace; this is your profile.</p>}
        <View me={me} news={news} refresh={() => { load(true) }} />
      </main>
      <footer>
        <p class='muted'><a href='/api/docs'>API reference</a></p>
      </footer>
    </>
  )
}

const root = document.getElementById('app')
if (root !== null) {
  const live = document.createElement('p')
  live.id = 'live'
  live.setAttribute('role', 'status')
  live.setAttribute('aria-live', 'polite')
  live.className = 'live'
  root.replaceChildren()
  document.body.append(live)
  render(<App identityProvider={root.dataset.identityProvider === 'yes'} />, root)
}
