import { useCallback, useEffect, useState } from 'preact/hooks'

/** The page's path, and a way to go elsewhere without loading the page (history.pushState). */
export function usePath (): [string, (to: string, replace?: boolean) => void] {
  const [path, setPath] = useState(location.pathname)
  useEffect(() => {
    const back = () => { setPath(location.pathname) }
    addEventListener('popstate', back)
    return () => { removeEventListener('popstate', back) }
  }, [])
  const go = useCallback((to: string, replace = false) => {
    if (replace) history.replaceState(null, '', to)
    else history.pushState(null, '', to)
    setPath(to)
  }, [])
  return [path, go]
}
