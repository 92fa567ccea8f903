import { useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api.js'
import type { ScreenProps } from '../screen.js'
import { announce } from '../announce.js'
import { when } from '../format.js'
import { ConfirmButton } from '../components/confirm-button.js'
import { OnceSecret } from '../components/once-secret.js'
import { ListState, Table } from '../components/table.js'
import { useEffect } from 'preact/hooks'

export function ApiKeys (_props: ScreenProps) {
  const [items, setItems] = useState<Array<Schemas['ApiKey']> | null>(null)
  const [problem, setProblem] = useState<Problem | null>(null)
  const [name, setName] = useState('')
  const [created, setCreated] = useState<Schemas['ApiKeyCreated'] | null>(null)
  const load = () => {
    void call(api.GET('/api/api-keys')).then(r => { if (r.ok) { setItems(r.data.items); setProblem(null) } else setProblem(r.problem) })
  }
  useEffect(load, [])
  const create = async (e: Event) => {
    e.preventDefault()
    const r = await call(api.POST('/api/api-keys', { body: { name: name.trim() } }))
    if (r.ok) { setCreated(r.data); setName(''); announce(`API key ${r.data.name} created: copy it now, it is shown once.`) } else { setProblem(r.problem); announce(r.problem.text) }
    load()
  }
  const revoke = async (k: Schemas['ApiKey']) => {
    const r = await call(api.DELETE('/api/api-keys/{apiKeyId}', { params: { path: { apiKeyId: k.id } } }))
    if (r.ok) announce(`API key ${k.name} was revoked.`)
    else { setProblem(r.problem); announce(r.problem.text) }
    load()
  }
  return (
    <>
      <form class='card' onSubmit={create} aria-labelledby='key-title'>
        <h2 id='key-title'>Create an API key</h2>
        <label for='key-name'>Name</label>
        <input id='key-name' required maxLength={100} value={name} onInput={e => { setName(e.currentTarget.value) }} />
        <button type='submit'>Create the key</button>
      </form>
      {created !== null && <OnceSecret label={`The key ${created.name}`} secret={created.secret} onDone={() => { setCreated(null) }} />}
      <ListState items={items} problem={problem} retry={load} empty='No API keys.'>
        <Table caption='API keys' heads={['Name', 'Prefix', 'Created', 'Last used', '']}>
          {items?.map(k => (
            <tr key={k.id}>
              <td>{k.name}</td><td><code>{k.prefix}…</code></td><td>{when(k.createdAt)}</td><td>{when(k.lastUsedAt)}</td>
              <td><ConfirmButton label={`Revoke ${k.name}`} confirm={`Yes, revoke ${k.name}`} onConfirm={async () => { await revoke(k) }} /></td>
            </tr>
          ))}
        </Table>
      </ListState>
    </>
  )
}
