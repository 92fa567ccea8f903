import type { ComponentChildren } from 'preact'
import { useLayoutEffect, useRef } from 'preact/hooks'
import { t, tParts } from '../i18n.js'

/** One row's outcome: its place in what was sent (counted from 1), its address, what happened. */
export interface RowResult {
  key: string
  /** The row's number in the box as sent, from 1. */
  row: number
  email: string
  outcome: string
  text: string
  /** Not done: the row stays in the box, to be corrected or sent again. */
  failed: boolean
}

/**
 * The results of a send, beside the form: a summary, then a line per row with its reason. The
 * focus moves to the heading after each send (`sent` changes), so a keyboard or screen-reader
 * user lands on what happened instead of the page's body.
 */
export function Results ({ id, sent, summary, results, children }: {
  id: string, sent: number, summary: string, results: RowResult[], children?: ComponentChildren
}) {
  const heading = useRef<HTMLHeadingElement>(null)
  useLayoutEffect(() => { if (sent > 0) heading.current?.focus() }, [sent])
  if (results.length === 0 && sent === 0) return null
  const failed = results.filter(r => r.failed).length
  return (
    <section class='card results-card' aria-labelledby={`${id}-results-title`}>
      <h2 id={`${id}-results-title`} tabIndex={-1} ref={heading}>{t('results')}</h2>
      <p class='summary'>{summary}{failed > 0 && ` ${t('rowsStay', { count: failed })}`}</p>
      <ul class='results' aria-label={t('results')}>
        {results.map(r => (
          <li key={r.key} class={`result ${r.outcome}`} data-outcome={r.outcome} data-row={r.row}>
            {tParts('resultItem', { row: <span class='row-number'>{t('rowNumber', { row: r.row })}</span>, email: <strong>{r.email}</strong>, text: r.text })}
          </li>
        ))}
      </ul>
      {children}
    </section>
  )
}
