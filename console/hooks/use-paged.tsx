import { useState } from 'preact/hooks'
import type { Outcome } from '../api.js'
import { Pager } from '../components/table.js'
import { useCall } from './use-call.js'

export interface PageOf<T> { items: T[], nextCursor?: string | null }

/**
 * One page of a server-paged list: `load(cursor)` fetches it; next/previous walk the cursors the
 * server handed out, back to the first page when `key` (the filters) changes. `reload()` fetches
 * the current page again; so does each page of news of the events feed.
 */
export function usePaged<T> (load: (cursor: string | undefined) => Promise<Outcome<PageOf<T>>>, key: unknown[]) {
  const keyText = JSON.stringify(key)
  const [walk, setWalk] = useState<{ key: string, cursors: Array<string | undefined> }>({ key: keyText, cursors: [undefined] })
  const cursors = walk.key === keyText ? walk.cursors : [undefined]
  const cursor = cursors[cursors.length - 1]
  const { data, problem, reload } = useCall(async () => await load(cursor), [keyText, cursor ?? null], { live: true })
  const next = data?.nextCursor ?? null
  return {
    items: data?.items ?? null,
    problem,
    reload,
    pager: (
      <Pager
        page={cursors.length}
        hasNext={next !== null}
        onNext={() => { if (next !== null) setWalk({ key: keyText, cursors: [...cursors, next] }) }}
        onPrevious={() => { setWalk({ key: keyText, cursors: cursors.length > 1 ? cursors.slice(0, -1) : cursors }) }}
      />
    )
  }
}
