import { createContext, type ComponentChildren } from 'preact'
import { useContext, useEffect, useRef, useState } from 'preact/hooks'
import { api, call, type Problem } from '../api.js'
import { t } from '../i18n.js'

// Live: the console follows the events feed (GET /api/events) with its cursor. It first walks to
// the end of the feed, then asks every few seconds; each page with events bumps `news`, and the
// open screen's lists read again (useCall's `live`) — an accepted invitation or a new member shows
// without a reload. A refused read waits longer each time (doubling up to a minute), never less
// than the service's Retry-After; a 401 (the session ended) shows the signed-out view at once.

/** The wait between reads once the feed is caught up. */
const POLL_MS = 2500
const MAX_WAIT_MS = 60_000
const PAGE = 100

/** How long to wait before the next read, after `failures` refused reads in a row (this one included). */
function nextWait (problem: Problem | null, failures: number): number {
  if (problem === null) return POLL_MS
  const backoff = Math.min(MAX_WAIT_MS, POLL_MS * 2 ** failures)
  return Math.max(backoff, (problem.retryAfter ?? 0) * 1000)
}

interface Live {
  /** Bumped by each page of new events (0 until the first after the console opened). */
  news: number
  /** The session ended (a 401): the console shows its signed-out view. */
  signedOut: () => void
}

const LiveContext = createContext<Live>({ news: 0, signedOut: () => {} })

export function useLive (): Live {
  return useContext(LiveContext)
}

export function LiveProvider ({ enabled, onSignedOut, children }: { enabled: boolean, onSignedOut: () => void, children: ComponentChildren }) {
  const [news, setNews] = useState(0)
  // The handler as a ref: a new function from the parent's render must not restart the feed.
  const signedOutRef = useRef(onSignedOut)
  useEffect(() => { signedOutRef.current = onSignedOut }, [onSignedOut])
  const [value, setValue] = useState<Live>({ news: 0, signedOut: () => { signedOutRef.current() } })
  // What the admin reads at the foot of the page: following the feed, or paused until when.
  const [state, setState] = useState<{ paused: number } | 'live' | null>(null)
  useEffect(() => { setValue(v => v.news === news ? v : { ...v, news }) }, [news])
  useEffect(() => {
    if (!enabled) return
    let stopped = false
    let timer: ReturnType<typeof setTimeout> | undefined
    let after: string | undefined
    let caughtUp = false
    let failures = 0
    const poll = async () => {
      const r = await call(api.GET('/api/events', { params: { query: after === undefined ? { limit: PAGE } : { after, limit: PAGE } } }))
      if (stopped) return
      if (!r.ok) {
        if (r.problem.status === 401) { signedOutRef.current(); return }
        failures++
        const wait = nextWait(r.problem, failures)
        setState({ paused: Math.ceil(wait / 1000) })
        timer = setTimeout(poll, wait)
        return
      }
      failures = 0
      if (r.data.nextCursor !== null) after = r.data.nextCursor
      if (r.data.items.length > 0 && caughtUp) setNews(n => n + 1)
      // A full page: more is waiting, ask again at once; otherwise we are at the end of the feed.
      if (r.data.items.length === PAGE) { timer = setTimeout(poll, 0); return }
      caughtUp = true
      setState('live')
      timer = setTimeout(poll, nextWait(null, 0))
    }
    void poll()
    return () => { stopped = true; clearTimeout(timer) }
  }, [enabled])
  return (
    <LiveContext.Provider value={value}>
      {children}
      {state !== null && (
        <p id='live-state' class='live'>
          {state === 'live' ? t('liveOn') : t('livePaused', { seconds: state.paused })}
        </p>
      )}
    </LiveContext.Provider>
  )
}
