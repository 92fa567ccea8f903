import { api, call, retryValues, type Problem, type Schemas } from '../api.js'
import { screenWordsOf } from '../i18n.js'
import type own from '../../src/i18n/catalogues/en/console-profile.json'
import { announce } from '../announce.js'
import { splitAddresses } from '../rows.js'
import { useSendForm } from '../hooks/use-send-form.js'
import { Results, type RowResult } from './results.js'

// Only the Profile screen has these forms (this and notice-choice.tsx): their words are its
// catalogue's (console-profile.json), fetched with it, not the shell's that every screen's first
// load pays for. The results' words are the shell's (the Invitations screen's form shows them too).
const { t } = screenWordsOf<typeof own>('profile')

export interface Result {
  email: string
  outcome: 'invited' | 're-sent' | 'asked' | 'member' | 'invalid' | 'budget' | 'failed'
  text: string
}

/** A refused address, in words: the same for an invitation and a request. */
export function refusal (email: string, p: Problem): Result {
  if (p.code === 'USER_EXISTS') return { email, outcome: 'member', text: t('resultMember') }
  if (p.code === 'VALIDATION_FAILED') return { email, outcome: 'invalid', text: t('resultInvalid') }
  if (p.status === 429) {
    return { email, outcome: 'budget', text: overBudget(p.retryAfter ?? 60) }
  }
  return { email, outcome: 'failed', text: p.text }
}

/** A row over the e-mail budget, in words: when to try again, after `wait` seconds. */
function overBudget (wait: number): string {
  return t('resultOverBudget', retryValues(wait))
}

/** One invitation (POST /api/users/invite), as a result line. */
export async function invite (email: string, role: Schemas['Role']): Promise<Result> {
  const r = await call(api.POST('/api/users/invite', { body: { email, role } }))
  if (!r.ok) return refusal(email, r.problem)
  return r.data.outcome === 'resent'
    ? { email, outcome: 're-sent', text: t('resultResent') }
    : { email, outcome: 'invited', text: t('resultInvited') }
}

const DONE: ReadonlySet<Result['outcome']> = new Set(['invited', 're-sent', 'asked'])
/** What stays in the box after a send: what can be corrected or sent again. */
const FAILED: ReadonlySet<Result['outcome']> = new Set(['invalid', 'budget', 'failed'])

/**
 * The form for one or many pasted addresses and a role: one operation per address (`send`), in
 * order (a budget refusal is reported for the addresses it stopped). The results beside the form,
 * a line per address counted from 1; only the failed addresses stay in the box. A member's invite
 * or request form.
 */
export function AddressForm ({ id, kind, roles, send, onDone }: {
  id: string
  /** Invitations sent, or asked for: the form's title, button and summary say which. */
  kind: 'invite' | 'ask'
  roles: Array<Schemas['Role']>
  send: (email: string, role: Schemas['Role']) => Promise<Result>
  onDone: () => void
}) {
  const { text, setText, role, setRole, busy, setBusy, results, setResults, summary, sent, finish } = useSendForm()
  const submit = async (e: Event) => {
    e.preventDefault()
    const addresses = splitAddresses(text)
    if (addresses.length === 0) { announce(t('enterAnAddress')); return }
    setBusy(true)
    const done: RowResult[] = []
    for (const [i, email] of addresses.entries()) {
      const r = await send(email, role)
      done.push({ key: `${sent}:${i}`, row: i + 1, email: r.email, outcome: r.outcome, text: r.text, failed: FAILED.has(r.outcome as Result['outcome']) })
      setResults([...done])
    }
    const ok = done.filter(r => DONE.has(r.outcome as Result['outcome'])).length
    finish(t('sendSummary', { kind, ok, total: done.length }), done.map(r => t('resultSaid', { email: r.email, text: r.text })).join(' '), done.filter(r => r.failed).map(r => r.email).join('\n'))
    onDone()
  }
  return (
    <div class='with-results'>
      <form class='card' onSubmit={submit} aria-labelledby={`${id}-title`}>
        <h2 id={`${id}-title`}>{t('formTitle', { kind })}</h2>
        <label for={`${id}-emails`}>{t('emailAddresses')}</label>
        <textarea
          id={`${id}-emails`} rows={3} aria-describedby={`${id}-hint`} value={text}
          onInput={e => { setText(e.currentTarget.value) }}
        />
        <p id={`${id}-hint`} class='muted'>{t('addressesHint', { role: roles.length === 1 ? roles[0] ?? 'member' : 'any' })}</p>
        {roles.length > 1 && (
          <>
            <label for={`${id}-role`}>{t('headRole')}</label>
            <select id={`${id}-role`} value={role} onChange={e => { setRole(e.currentTarget.value as Schemas['Role']) }}>
              {roles.map(r => <option key={r} value={r}>{t('role', { role: r })}</option>)}
            </select>
          </>
        )}
        <button type='submit' disabled={busy}>{t(busy ? 'formBusy' : 'formSubmit', { kind })}</button>
      </form>
      <Results id={id} sent={sent} summary={summary} results={results} />
    </div>
  )
}
