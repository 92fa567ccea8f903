import { useCallback, useEffect, useState } from 'preact/hooks'
import type { Route, Screen } from '../routes.js'
import { loadScreenWords } from '../i18n.js'

// A screen from its own chunk (routes.ts), with its own words in the reader's language (a chunk
// of their own, fetched at the same time): ready at once when they came before, else loading
// until both arrive, or failed (the connection dropped; a console two builds old) with a way to
// try again.

/** The screens whose chunk has arrived: opened again, each is drawn in the same render. */
const loaded = new Map<Route, Screen>()

export type ScreenState =
  | { state: 'ready', View: Screen }
  | { state: 'loading' }
  | { state: 'failed', retry: () => void }
  | { state: 'none' }

/** The screen of `route` (undefined: none to load, e.g. before it is known who is signed in). */
export function useScreen (route: Route | undefined): ScreenState {
  const [, arrived] = useState(0)
  const [failed, setFailed] = useState<Route | null>(null)
  const [attempt, setAttempt] = useState(0)
  useEffect(() => {
    if (route === undefined || loaded.has(route)) return
    let current = true
    setFailed(null)
    Promise.all([route.load(), route.words === undefined ? undefined : loadScreenWords(route.words)]).then(([view]) => {
      loaded.set(route, view)
      if (current) arrived(n => n + 1)
    }, () => { if (current) setFailed(route) })
    return () => { current = false }
  }, [route, attempt])
  const retry = useCallback(() => { setAttempt(n => n + 1) }, [])

  if (route === undefined) return { state: 'none' }
  const View = loaded.get(route)
  if (View !== undefined) return { state: 'ready', View }
  return failed === route ? { state: 'failed', retry } : { state: 'loading' }
}
