import { useCallback, useEffect, useRef, useState } from 'preact/hooks'
import type { Outcome, Problem } from '../api.js'
import { useLive } from './live.js'

/**
 * One read of the service, as a screen shows it: its data, or the problem (a 401 shows the
 * signed-out view). Read again when `key` changes, on `reload()`, and with `live` on each page of
 * new events of the feed the console follows.
 */
export function useCall<T> (request: () => Promise<Outcome<T>>, key: unknown[], { live = false } = {}) {
  const { news, signedOut } = useLive()
  const [data, setData] = useState<T | null>(null)
  const [problem, setProblem] = useState<Problem | null>(null)
  const [tick, setTick] = useState(0)
  // The latest request function: the read depends on `key`, not on the closure's identity.
  const requestRef = useRef(request)
  requestRef.current = request
  const keyText = JSON.stringify(key)
  const liveNews = live ? news : 0
  useEffect(() => {
    let current = true
    void requestRef.current().then(r => {
      if (!current) return
      if (r.ok) { setData(r.data); setProblem(null); return }
      if (r.problem.status === 401) signedOut()
      setProblem(r.problem)
    })
    return () => { current = false }
  }, [keyText, tick, liveNews, signedOut])
  const reload = useCallback(() => { setTick(n => n + 1) }, [])
  return { data, problem, reload, setData }
}
