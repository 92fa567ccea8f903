import { useLayoutEffect, useRef, useState } from 'preact/hooks'
import type { Problem } from '../api.js'
import { announce } from '../announce.js'
import { ProblemNote } from '../components/problem-note.js'

/** Whether the problem's field (`allowedDomains.0`, `rows.2.email`) is the form's `field`. */
const concerns = (problemField: string, field: string): boolean => problemField === field || problemField.startsWith(`${field}.`)

/**
 * Every form's refusals, one way: the words for each field it concerns (words.ts) beside that
 * field — the control marked invalid and described by them, the focus on the first — and what
 * concerns none of `fields` (the contract's names of the form's fields) at the form's foot.
 */
export function useFormProblem (fields: string[]) {
  const [problem, setProblem] = useState<Problem | null>(null)
  const form = useRef<HTMLFormElement>(null)
  useLayoutEffect(() => {
    if (problem !== null) form.current?.querySelector<HTMLElement>('[aria-invalid=true]')?.focus()
  }, [problem])
  const wordsOf = (field: string): string | undefined => problem?.fields.find(f => concerns(f.field, field))?.words
  const elsewhere = problem !== null && !problem.fields.some(f => fields.some(field => concerns(f.field, field)))
  return {
    form,
    problem,
    /** Show a refusal (and say it in the live region); null clears it. */
    fail: (p: Problem | null) => { setProblem(p); if (p !== null) announce(p.text) },
    /** The attributes of the control of `field` (its id `id`; `hint`: the id of its hint, if any). */
    control: (field: string, id: string, hint?: string) => {
      const invalid = wordsOf(field) !== undefined
      const describedBy = [hint, invalid ? `${id}-error` : undefined].filter(d => d !== undefined).join(' ')
      return { 'aria-invalid': invalid ? 'true' as const : undefined, 'aria-describedby': describedBy === '' ? undefined : describedBy }
    },
    /** The words for `field`, to put right after its control. */
    error: (field: string, id: string) => {
      const words = wordsOf(field)
      return words === undefined ? null : <p id={`${id}-error`} class='field-error'>{words}</p>
    },
    /** The refusal's sentence when it concerns none of the form's fields. */
    note: elsewhere ? <ProblemNote problem={problem} /> : null
  }
}
