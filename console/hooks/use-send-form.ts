import { useState } from 'preact/hooks'
import type { Schemas } from '../api.js'
import { announce } from '../announce.js'
import type { RowResult } from '../components/results.js'

/**
 * The state of a form that sends many addresses at once (the invite and request forms): the box,
 * the role, the results of the last send beside it. `finish` ends a send: the summary said, only
 * the rows left to correct or send again back in the box, the focus to the results (`sent`).
 */
export function useSendForm () {
  const [text, setText] = useState('')
  const [role, setRole] = useState<Schemas['Role']>('member')
  const [busy, setBusy] = useState(false)
  const [results, setResults] = useState<RowResult[]>([])
  const [summary, setSummary] = useState('')
  const [sent, setSent] = useState(0)
  const finish = (said: string, details: string, left: string) => {
    setBusy(false)
    setSummary(said)
    announce(`${said} ${details}`)
    setText(left)
    setSent(n => n + 1)
  }
  return { text, setText, role, setRole, busy, setBusy, results, setResults, summary, sent, finish }
}
