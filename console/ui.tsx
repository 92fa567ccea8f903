import type { ComponentChildren } from 'preact'
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import type { Outcome, Problem, Schemas } from './api.js'

// Shared pieces of the screens: the live region, error sentences with their retry button, paged
// lists (the server's cursor, never the whole list), dates.

let liveRegion: HTMLElement | null = null

/** Say `text` in the page's live region (screen readers read it; it also shows at the bottom). */
export function announce (text: string): void {
  liveRegion ??= document.getElementById('live')
  if (liveRegion === null) return
  // Cleared first, so the same sentence twice is announced twice.
  liveRegion.textContent = ''
  setTimeout(() => { if (liveRegion !== null) liveRegion.textContent = text }, 30)
}

export function ProblemNote ({ problem, retry }: { problem: Problem | null, retry?: () => void }) {
  if (problem === null) return null
  const retryable = retry !== undefined && (problem.status === 503 || problem.status === 0)
  return (
    <p class='problem' role='alert'>
      {problem.text}
      {retryable && <> <button type='button' onClick={retry}>Try again</button></>}
    </p>
  )
}

/**
 * A moment, short: the year only when it is not this one. The date and the time each stay on one
 * line (no-break spaces inside), so a narrow column wraps between them and nowhere else.
 */
/** The door an action came through, as the contract's `source` names it (audit events, inviters). */
export const DOORS: Record<Schemas['AuditEvent']['source'], string> = {
  web: 'web', api: 'API', mcp: 'MCP', chat: 'chat', system: 'system'
}

/** Who invited, through which door: "ada@example.com (web)"; a dash when nobody did. */
export function inviterText (by: { email: string | null, source: Schemas['AuditEvent']['source'] } | null | undefined): string {
  return by == null ? '—' : `${by.email ?? 'the service'} (${DOORS[by.source]})`
}

export function when (iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return '—'
  const d = new Date(iso)
  const thisYear = d.getFullYear() === new Date().getFullYear()
  const date = d.toLocaleDateString([], { ...(thisYear ? {} : { year: 'numeric' }), month: 'short', day: 'numeric' })
  const time = d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
  return `${date.replace(/\s/g, '\u00a0')} ${time.replace(/\s/g, '\u00a0')}`
}

export interface PageOf<T> { items: T[], nextCursor?: string | null }

/**
 * One page of a server-paged list: `load(cursor)` fetches it; next/previous walk the cursors the
 * server handed out. `reload()` fetches the current page again (after a change, or live news).
 */
export function usePaged<T> (load: (cursor: string | undefined) => Promise<Outcome<PageOf<T>>>, deps: unknown[]) {
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined])
  const [items, setItems] = useState<T[] | null>(null)
  const [next, setNext] = useState<string | null>(null)
  const [problem, setProblem] = useState<Problem | null>(null)
  const cursor = cursors[cursors.length - 1]
  const [tick, setTick] = useState(0)
  const loadRef = useRef(load)
  loadRef.current = load
  useEffect(() => { setCursors([undefined]) }, deps)
  useEffect(() => {
    let live = true
    void loadRef.current(cursor).then(r => {
      if (!live) return
      if (r.ok) { setItems(r.data.items); setNext(r.data.nextCursor ?? null); setProblem(null) } else setProblem(r.problem)
    })
    return () => { live = false }
  }, [cursor, tick, ...deps])
  const reload = useCallback(() => { setTick(n => n + 1) }, [])
  return {
    items,
    problem,
    reload,
    pager: (
      <Pager
        page={cursors.length}
        hasNext={next !== null}
        onNext={() => { if (next !== null) setCursors(c => [...c, next]) }}
        onPrevious={() => { setCursors(c => c.length > 1 ? c.slice(0, -1) : c) }}
      />
    )
  }
}

function Pager ({ page, hasNext, onNext, onPrevious }: { page: number, hasNext: boolean, onNext: () => void, onPrevious: () => void }) {
  if (page === 1 && !hasNext) return null
  return (
    <nav class='pager' aria-label='Pages'>
      <button type='button' onClick={onPrevious} disabled={page === 1}>Previous page</button>
      <span>Page {page}</span>
      <button type='button' onClick={onNext} disabled={!hasNext}>Next page</button>
    </nav>
  )
}

/** A list's table, or what to say when it is empty or still loading. */
export function ListState<T> ({ items, problem, retry, empty, children }: {
  items: T[] | null, problem: Problem | null, retry: () => void, empty: string, children: ComponentChildren
}) {
  if (problem !== null) return <ProblemNote problem={problem} retry={retry} />
  if (items === null) return <p class='muted'>Loading…</p>
  if (items.length === 0) return <p class='muted'>{empty}</p>
  return <>{children}</>
}

/** A button that asks once more before it acts: the confirm button takes the focus, Cancel returns it. */
export function ConfirmButton ({ label, confirm, onConfirm, danger = true }: {
  label: string, confirm: string, onConfirm: () => Promise<void> | void, danger?: boolean
}) {
  const [asking, setAsking] = useState(false)
  const [busy, setBusy] = useState(false)
  const first = useRef<HTMLButtonElement>(null)
  const yes = useRef<HTMLButtonElement>(null)
  const wasAsking = useRef(false)
  // A layout effect: the focus moves in the same task as the render that swapped the buttons,
  // never leaving it on the page's body until the next paint (a keyboard user pressing on at once).
  useLayoutEffect(() => {
    if (asking) yes.current?.focus()
    else if (wasAsking.current) first.current?.focus()
    wasAsking.current = asking
  }, [asking])
  if (!asking) return <button type='button' ref={first} onClick={() => { setAsking(true) }}>{label}</button>
  return (
    <span class='confirm'>
      <button
        type='button' ref={yes} class={danger ? 'danger' : ''} disabled={busy}
        onClick={async () => { setBusy(true); try { await onConfirm() } finally { setBusy(false); setAsking(false) } }}
      >{confirm}
      </button>
      <button type='button' onClick={() => { setAsking(false) }}>Cancel</button>
    </span>
  )
}

/** A list's table: caption, column heads (an empty head is an actions column), rows, the pager. */
export function Table ({ caption, heads, pager, children }: { caption: string, heads: string[], pager?: ComponentChildren, children: ComponentChildren }) {
  // At 360 px the rows stack and the column heads are hidden: each cell names its column
  // (data-label, shown before it by the stylesheet), set after every render for the rows drawn.
  const body = useRef<HTMLTableSectionElement>(null)
  useEffect(() => {
    body.current?.querySelectorAll('tr').forEach(tr => {
      Array.from(tr.children).forEach((cell, i) => { const head = heads[i]; if (head !== undefined && head !== '') cell.setAttribute('data-label', head) })
    })
  })
  return (
    <>
      <div class='table'>
        <table>
          <caption>{caption}</caption>
          <thead><tr>{heads.map(h => <th key={h} scope='col'>{h === '' ? <span class='visually-hidden'>Actions</span> : h}</th>)}</tr></thead>
          <tbody ref={body}>{children}</tbody>
        </table>
      </div>
      {pager}
    </>
  )
}
