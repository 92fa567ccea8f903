import type { ComponentChildren } from 'preact'
import { useEffect, useRef } from 'preact/hooks'
import type { Problem } from '../api.js'
import { ProblemNote } from './problem-note.js'
import { t } from '../i18n.js'

/** A list's table, or what to say when it is empty or still loading. */
export function ListState<T> ({ items, problem, retry, empty, children }: {
  items: T[] | null, problem: Problem | null, retry: () => void, empty: string, children: ComponentChildren
}) {
  if (problem !== null) return <ProblemNote problem={problem} retry={retry} />
  if (items === null) return <p class='muted'>{t('loading')}</p>
  if (items.length === 0) return <p class='muted'>{empty}</p>
  return <>{children}</>
}

/** Previous and next page of a server-paged list (usePaged). */
export function Pager ({ page, hasNext, onNext, onPrevious }: { page: number, hasNext: boolean, onNext: () => void, onPrevious: () => void }) {
  if (page === 1 && !hasNext) return null
  return (
    <nav class='pager' aria-label={t('pages')}>
      <button type='button' onClick={onPrevious} disabled={page === 1}>{t('previousPage')}</button>
      <span>{t('page', { page })}</span>
      <button type='button' onClick={onNext} disabled={!hasNext}>{t('nextPage')}</button>
    </nav>
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
          <thead><tr>{heads.map(h => <th key={h} scope='col'>{h === '' ? <span class='visually-hidden'>{t('actions')}</span> : h}</th>)}</tr></thead>
          <tbody ref={body}>{children}</tbody>
        </table>
      </div>
      {pager}
    </>
  )
}
