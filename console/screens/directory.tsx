import { useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api.js'
import { announce } from '../announce.js'
import { when } from '../format.js'
import { ConfirmButton } from '../components/confirm-button.js'
import { Copyable } from '../components/copyable.js'
import { OnceSecret } from '../components/once-secret.js'
import { ProblemNote } from '../components/problem-note.js'
import { ListState, Table } from '../components/table.js'
import { useCall } from '../hooks/use-call.js'
import { useFormProblem } from '../hooks/use-form-problem.js'
import { screenWordsOf } from '../i18n.js'
import type own from '../../src/i18n/catalogues/en/console-directory.json'

const { t, tParts } = screenWordsOf<typeof own>('directory')

// The company directory (Okta, Microsoft Entra ID) over SCIM 2.0 (docs/directory.md): the base URL
// to paste there, the workspace's directory key (an API key with the `scim` scope alone, which
// belongs to the workspace), and the directory's settings (the admins' group, the welcome e-mail).

/** A directory key: `scim` and nothing else (a key holding more is an ordinary key). */
const isDirectoryKey = (k: Schemas['ApiKey']): boolean => k.scopes.length === 1 && k.scopes[0] === 'scim'

/** The admins' group and the welcome e-mail (PATCH /api/workspace/settings, `directory`). */
function DirectorySettings ({ directory }: { directory: Schemas['DirectorySettings'] }) {
  const [group, setGroup] = useState(directory.adminGroup ?? '')
  const [welcome, setWelcome] = useState(directory.welcomeEmail)
  const form = useFormProblem(['directory'])
  const save = async (e: Event) => {
    e.preventDefault()
    const adminGroup = group.trim() === '' ? null : group.trim()
    const r = await call(api.PATCH('/api/workspace/settings', { body: { directory: { adminGroup, welcomeEmail: welcome } } }))
    form.fail(r.ok ? null : r.problem)
    if (r.ok) announce(t('settingsSaved', { admins: adminGroup === null ? 'none' : 'group', group: adminGroup ?? '', welcome: welcome ? 'on' : 'off' }))
  }
  return (
    <form class='card' onSubmit={save} aria-labelledby='dir-title' ref={form.form}>
      <h2 id='dir-title'>{t('settings')}</h2>
      <label for='dir-group'>{t('adminsGroup')}</label>
      <input id='dir-group' maxLength={200} placeholder={t('adminsGroupExample')} value={group} {...form.control('directory.adminGroup', 'dir-group', 'dir-group-hint')} onInput={e => { setGroup(e.currentTarget.value) }} />
      {form.error('directory.adminGroup', 'dir-group')}
      <p id='dir-group-hint' class='muted'>{t('adminsGroupHint')}</p>
      <label class='check' for='dir-welcome'>
        <input id='dir-welcome' type='checkbox' checked={welcome} onChange={e => { setWelcome(e.currentTarget.checked) }} />
        {t('welcomeEmail')}
      </label>
      <button type='submit'>{t('saveSettings')}</button>
      {form.note}
    </form>
  )
}

export function Directory () {
  const keys = useCall(async () => await call(api.GET('/api/api-keys')), [])
  const settings = useCall(async () => await call(api.GET('/api/workspace/settings')), [])
  const [name, setName] = useState('')
  const [created, setCreated] = useState<Schemas['ApiKeyCreated'] | null>(null)
  const [problem, setProblem] = useState<Problem | null>(null)
  const form = useFormProblem(['name'])
  const base = `${document.getElementById('app')?.dataset.publicUrl ?? location.origin}/api/scim/v2`
  const create = async (e: Event) => {
    e.preventDefault()
    const r = await call(api.POST('/api/api-keys', { body: { name: name.trim(), scopes: ['scim'] } }))
    form.fail(r.ok ? null : r.problem)
    if (r.ok) { setCreated(r.data); setName(''); announce(t('keyCreated', { name: r.data.name })) }
    keys.reload()
  }
  const revoke = async (k: Schemas['ApiKey']) => {
    const r = await call(api.DELETE('/api/api-keys/{apiKeyId}', { params: { path: { apiKeyId: k.id } } }))
    setProblem(r.ok ? null : r.problem)
    announce(r.ok ? t('keyRevoked', { name: k.name }) : r.problem.text)
    keys.reload()
  }
  const items = keys.data?.items.filter(isDirectoryKey) ?? null
  return (
    <>
      <p>{t('intro')}</p>
      <section class='card' aria-labelledby='scim-title'>
        <h2 id='scim-title'>{t('connect')}</h2>
        <Copyable id='scim-base' label={t('baseUrl')} value={base} />
        <form onSubmit={create} ref={form.form}>
          <label for='scim-name'>{t('keyName')}</label>
          <input id='scim-name' required maxLength={100} placeholder='Okta' value={name} {...form.control('name', 'scim-name')} onInput={e => { setName(e.currentTarget.value) }} />
          {form.error('name', 'scim-name')}
          <button type='submit'>{t('createKey')}</button>
          {form.note}
        </form>
        <p class='muted'>{tParts('keyHint', { scope: <code>scim</code> })}</p>
      </section>
      {created !== null && <OnceSecret label={t('theKey', { name: created.name })} secret={created.secret} onDone={() => { setCreated(null) }} />}
      <ProblemNote problem={problem} />
      <div id='scim-keys'>
        <ListState items={items} problem={keys.problem} retry={keys.reload} empty={t('noKey')}>
          <Table caption={t('keys')} heads={[t('headName'), t('headMade'), t('headLastUsed'), '']}>
            {items?.map(k => (
              <tr key={k.id}>
                <td class='address'>{k.name} <code>{k.prefix}…</code></td>
                <td>{when(k.createdAt)}</td>
                <td>{when(k.lastUsedAt)}</td>
                <td><ConfirmButton label={t('revoke')} name={t('revokeKey', { name: k.name })} confirm={t('revokeYes', { name: k.name })} onConfirm={async () => { await revoke(k) }} /></td>
              </tr>
            ))}
          </Table>
        </ListState>
      </div>
      <ProblemNote problem={settings.problem} retry={settings.reload} />
      {settings.data !== null && <DirectorySettings directory={settings.data.directory} />}
    </>
  )
}
