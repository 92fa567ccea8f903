import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from './api.js'
import { ProblemNote } from './components/problem-note.js'
import { ErrorBoundary } from './components/error-boundary.js'
import { Nav } from './components/nav.js'
import { LiveProvider } from './hooks/live.js'
import { usePath } from './hooks/use-path.js'
import { useScreen } from './hooks/use-screen.js'
import { ScreenLoadFailed } from './components/screen-load-failed.js'
import { PROFILE, ROUTES, routeAt } from './routes.js'
import { NotFound } from './screens/not-found.js'
import { t, hasLanguage, loadLanguage } from './i18n.js'
import { textDirection } from '../src/i18n/locales.js'

// The admin console: one page, a screen per path (the route table, routes.ts), every call an
// operation of the contract. Admins see every screen; a member sees their profile. Its words are
// in the reader's language (i18n.ts): the member's own, else the workspace's default (which an
// admin may read), else the browser's, else English; fetched once it is known who is signed in.

type Who = { state: 'loading' } | { state: 'in', me: Schemas['Me'] } | { state: 'out' } | { state: 'problem', problem: Problem }

function SignedOut ({ identityProvider }: { identityProvider: boolean }) {
  return (
    <main>
      <h1>{t('workspace')}</h1>
      <p id='status' class='muted'>{t('notSignedIn')}</p>
      <div id='signed-out'>
        <p><a href='/login'>{t('signInWithLink')}</a></p>
        {identityProvider && <p><a href='/api/oauth/login'>{t('signInWithOrganization')}</a></p>}
      </div>
    </main>
  )
}

export function App ({ identityProvider }: { identityProvider: boolean }) {
  const [who, setWho] = useState<Who>({ state: 'loading' })
  const [path, go] = usePath()
  const heading = useRef<HTMLHeadingElement>(null)
  const firstRender = useRef(true)

  const load = useCallback((quietly = false) => {
    if (!quietly) setWho({ state: 'loading' })
    void call(api.GET('/api/users/me')).then(async first => {
      // A failure before any language was loaded has no words to say it in: the browser's
      // language loaded, asked once more (a read), and said in it.
      const r = first.ok || first.problem.status === 401 || hasLanguage()
        ? first
        : await loadLanguage([...navigator.languages]).then(async () => await call(api.GET('/api/users/me')), () => first)
      const who: Who = r.ok
        ? { state: 'in', me: r.data }
        : r.problem.status === 401 ? { state: 'out' } : { state: 'problem', problem: r.problem }
      // An admin without a language of their own reads the workspace's (its settings are theirs to read).
      const own = r.ok ? r.data.locale : null
      const workspace = r.ok && own == null && r.data.user.role === 'admin'
        ? await call(api.GET('/api/workspace/settings')).then(s => s.ok ? s.data.locale : null)
        : null
      // A chunk that could not be fetched: English, if that can be.
      await loadLanguage([own, workspace, ...navigator.languages]).catch(async () => await loadLanguage([])).then(locale => {
        document.documentElement.lang = locale
        document.documentElement.dir = textDirection(locale)
      }, () => {})
      setWho(who)
    })
  }, [])
  useEffect(() => { load() }, [load])
  const signedOut = useCallback(() => { setWho({ state: 'out' }) }, [])

  const me = who.state === 'in' ? who.me : null
  const admin = me?.user.role === 'admin'
  // The workspace's logo above the screens, for admins (who may read the look), read again with `me`.
  const [logo, setLogo] = useState<{ src: string, alt: string } | null>(null)
  useEffect(() => {
    if (me === null || !admin) { setLogo(null); return }
    void call(api.GET('/api/workspace/branding')).then(r => {
      const file = r.ok ? r.data.logo : null
      setLogo(r.ok && file !== null ? { src: new URL(file.url).pathname, alt: r.data.displayName ?? me.workspace.name } : null)
    })
  }, [me, admin])
  // Resolved once it is known who is signed in: while that loads, an admin's screen would read as
  // a member's (their profile), and the address would be rewritten to it.
  const route = me === null ? undefined : routeAt(path, admin)
  const allowed = route !== undefined && (!route.adminOnly || admin)
  const title = t(route === undefined ? 'notFound' : allowed ? route.title : 'screenProfile')
  // The screen's chunk, once it is known who is signed in (a member's `/` is their profile).
  const screen = useScreen(me === null || route === undefined ? undefined : allowed ? route : PROFILE)

  // An alias (the API's name, /console/invite-requests) shows its screen under the screen's path.
  useLayoutEffect(() => {
    if (route !== undefined && route.path !== path && path !== '/') go(route.path, true)
  }, [route, path, go])

  // In the same task as the render that shows the screen's heading (a layout effect, not an
  // effect that waits for the next frame): the title, the heading and the focus change together,
  // so nothing, a screen reader or a test, sees the new heading under the old title. The heading
  // comes with its screen, when the screen's chunk has arrived (a line says it loads till then).
  const drawn = screen.state !== 'loading'
  useLayoutEffect(() => {
    document.title = me === null ? t('workspace') : t('pageTitle', { title, workspace: me.workspace.name })
    if (heading.current === null || !drawn) return
    // After a navigation (not the first screen drawn) the focus goes to the new screen's heading.
    if (!firstRender.current) heading.current.focus()
    firstRender.current = false
  }, [route, title, me, drawn])

  if (who.state === 'loading') return <main><p id='status' class='muted'>{t('checkingSignIn')}</p></main>
  if (who.state === 'problem') {
    return <main><h1>{t('workspace')}</h1><p id='status' class='muted'>{t('accountNotLoaded')}</p><ProblemNote problem={who.problem} retry={() => { load() }} /></main>
  }
  if (who.state === 'out' || me === null) return <SignedOut identityProvider={identityProvider} />
  const screens = ROUTES.filter(s => !s.adminOnly || admin)
  return (
    <LiveProvider enabled={admin} onSignedOut={signedOut}>
      <a class='skip' href='#main'>{t('skipToScreen')}</a>
      <header>
        <p class='brand'>{logo !== null ? <img id='brand-logo' src={logo.src} alt={logo.alt} /> : me.workspace.name}</p>
        <Nav screens={screens} current={route} go={go} admin={admin} />
      </header>
      <main id='main'>
        {screen.state === 'loading'
          ? <p class='muted' id='screen-loading' role='status'>{t('loadingScreen', { title })}</p>
          : (
            <>
              <h1 tabIndex={-1} ref={heading}>{title}</h1>
              {route === undefined && <NotFound path={path} links={screens} />}
              {route !== undefined && !allowed && <p class='problem' role='alert'>{t('adminsOnly', { title: t(route.title) })}</p>}
              {screen.state === 'failed' && <ScreenLoadFailed title={title} retry={screen.retry} />}
              {screen.state === 'ready' && (
                <ErrorBoundary key={route?.path}>
                  <screen.View me={me} refresh={() => { load(true) }} />
                </ErrorBoundary>
              )}
            </>
            )}
      </main>
      <footer>
        <p class='muted'><a href='/api/docs'>{t('apiReference')}</a></p>
      </footer>
    </LiveProvider>
  )
}
