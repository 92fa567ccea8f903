import { useEffect, useState } from 'preact/hooks'
import { api, call } from './api.js'

// Live: the console follows the events feed (GET /api/events) with its cursor. It first walks to
// the end of the feed, then asks every few seconds; each page with events bumps `news`, and the
// open screen reloads its list — an accepted invitation or a new member shows without a reload.

const POLL_MS = 2500

export function useLiveFeed (enabled: boolean): number {
  const [news, setNews] = useState(0)
  useEffect(() => {
    if (!enabled) return
    let stopped = false
    let timer: ReturnType<typeof setTimeout> | undefined
    let after: string | undefined
    let caughtUp = false
    const poll = async () => {
      const r = await call(api.GET('/api/events', { params: { query: after === undefined ? { limit: 100 } : { after, limit: 100 } } }))
      if (stopped) return
      if (r.ok) {
        if (r.data.nextCursor !== null) after = r.data.nextCursor
        if (r.data.items.length > 0 && caughtUp) setNews(n => n + 1)
        // A full page: more is waiting, ask again at once; otherwise we are at the end of the feed.
        if (r.data.items.length === 100) { timer = setTimeout(poll, 0); return }
        caughtUp = true
      }
      timer = setTimeout(poll, POLL_MS)
    }
    void poll()
    return () => { stopped = true; clearTimeout(timer) }
  }, [enabled])
  return news
}
