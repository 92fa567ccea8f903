import type { Problem } from '../api.js'
import { t } from '../i18n.js'

/** A failed call in words, with a Try again button where waiting a moment may help (503, no network). */
export function ProblemNote ({ problem, retry }: { problem: Problem | null, retry?: () => void }) {
  if (problem === null) return null
  const retryable = retry !== undefined && (problem.status === 503 || problem.status === 0)
  return (
    <p class='problem' role='alert'>
      {problem.text}
      {retryable && <> <button type='button' onClick={retry}>{t('tryAgain')}</button></>}
    </p>
  )
}
