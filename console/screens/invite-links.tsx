import { useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api.js'
import { announce } from '../announce.js'
import { when } from '../format.js'
import { ConfirmButton } from '../components/confirm-button.js'
import { OnceSecret } from '../components/once-secret.js'
import { ProblemNote } from '../components/problem-note.js'
import { ListState, Table } from '../components/table.js'
import { useFormProblem } from '../hooks/use-form-problem.js'
import { usePaged } from '../hooks/use-paged.js'
import { readerLanguage, screenWordsOf } from '../i18n.js'
import type own from '../../src/i18n/catalogues/en/console-invite-links.json'

const { t } = screenWordsOf<typeof own>('invite-links')

// Invite links: a link anyone who has it may use to join as a member, after proving their address
// by e-mail. The link itself is shown once, when it is made or given a new code.

type Link = Schemas['InviteLink']

/** The link's lifetimes offered, in hours. */
const EXPIRIES = [1, 24, 168, 720, 2160]
/** A count as the reader's language writes it. */
const num = (n: number): string => n.toLocaleString(readerLanguage())
/** A lifetime in words: in hours under a day, else in days. */
const lifetime = (h: number): string => h < 24 ? t('linkHours', { n: h }) : t('linkDays', { n: h / 24 })

function CreateLink ({ onCreated }: { onCreated: (l: Schemas['InviteLinkCreated']) => void }) {
  const [name, setName] = useState('')
  const [maxUses, setMaxUses] = useState('')
  const [hours, setHours] = useState(168)
  const [domains, setDomains] = useState('')
  const [approval, setApproval] = useState(false)
  const form = useFormProblem(['name', 'maxUses', 'expiresInHours', 'allowedDomains', 'requiresApproval'])
  const submit = async (e: Event) => {
    e.preventDefault()
    const allowedDomains = [...new Set(domains.split(/[\s,;]+/).map(d => d.trim().toLowerCase()).filter(d => d !== ''))]
    const body = {
      ...(name.trim() === '' ? {} : { name: name.trim() }),
      role: 'member' as const,
      maxUses: maxUses.trim() === '' ? null : Number(maxUses),
      expiresInHours: hours,
      allowedDomains,
      requiresApproval: approval
    }
    const r = await call(api.POST('/api/invite-links', { body }))
    form.fail(r.ok ? null : r.problem)
    if (r.ok) { onCreated(r.data); setName(''); setMaxUses(''); setDomains(''); announce(t('linkCreatedDone')) }
  }
  return (
    <form class='card' onSubmit={submit} aria-labelledby='link-title' ref={form.form}>
      <h2 id='link-title'>{t('linkCreateTitle')}</h2>
      <p class='muted'>{t('linkAnyone')}</p>
      <label for='link-name'>{t('linkNameLabel')}</label>
      <input id='link-name' maxLength={100} placeholder={t('linkNameExample')} value={name} {...form.control('name', 'link-name')} onInput={e => { setName(e.currentTarget.value) }} />
      {form.error('name', 'link-name')}
      <label for='link-uses'>{t('linkUsesLabel')}</label>
      <input id='link-uses' type='number' min={1} max={100000} inputMode='numeric' value={maxUses} {...form.control('maxUses', 'link-uses')} onInput={e => { setMaxUses(e.currentTarget.value) }} />
      {form.error('maxUses', 'link-uses')}
      <label for='link-expiry'>{t('linkExpiresAfter')}</label>
      <select id='link-expiry' value={String(hours)} onChange={e => { setHours(Number(e.currentTarget.value)) }}>
        {EXPIRIES.map(h => <option key={h} value={String(h)}>{lifetime(h)}</option>)}
      </select>
      <label for='link-domains'>{t('linkDomainsLabel')}</label>
      <input id='link-domains' maxLength={2000} placeholder='acme.com' value={domains} {...form.control('allowedDomains', 'link-domains')} onInput={e => { setDomains(e.currentTarget.value) }} />
      {form.error('allowedDomains', 'link-domains')}
      <label class='check' for='link-approval'>
        <input id='link-approval' type='checkbox' checked={approval} onChange={e => { setApproval(e.currentTarget.checked) }} />
        {t('linkApproval')}
      </label>
      <button type='submit'>{t('linkCreate')}</button>
      {form.note}
    </form>
  )
}

/** A link in a message: its name (`named` yes), else when it was made ("the link of Nov 27 14:10"). */
const linkName = (l: Link): { named: string, name: string, when: string } =>
  ({ named: l.name === null ? 'no' : 'yes', name: l.name ?? '', when: when(l.createdAt) })

export function InviteLinks () {
  const { items, problem, reload, pager } = usePaged(
    async cursor => await call(api.GET('/api/invite-links', { params: { query: cursor === undefined ? { limit: 25 } : { limit: 25, cursor } } })),
    []
  )
  const [shown, setShown] = useState<Schemas['InviteLinkCreated'] | null>(null)
  const [actionProblem, setActionProblem] = useState<Problem | null>(null)
  const failed = (p: Problem) => { setActionProblem(p); announce(p.text) }
  const revoke = async (l: Link) => {
    const r = await call(api.DELETE('/api/invite-links/{linkId}', { params: { path: { linkId: l.id } } }))
    if (r.ok) { announce(t('linkRevokedDone', linkName(l))); setActionProblem(null) } else failed(r.problem)
    reload()
  }
  const regenerate = async (l: Link) => {
    const r = await call(api.POST('/api/invite-links/{linkId}/regenerate', { params: { path: { linkId: l.id } } }))
    if (r.ok) { setShown(r.data); setActionProblem(null); announce(t('linkNewCodeDone')) } else failed(r.problem)
    reload()
  }
  return (
    <>
      <CreateLink onCreated={l => { setShown(l); setActionProblem(null); reload() }} />
      {shown !== null && (
        <OnceSecret
          label={t('linkSecretLabel', { named: shown.name === null ? 'no' : 'yes', name: shown.name ?? '' })} secret={shown.url} onDone={() => { setShown(null) }}
          after={t('linkSecretAfter')}
        />
      )}
      <ProblemNote problem={actionProblem} />
      <ListState items={items} problem={problem} retry={reload} empty={t('linkNone')}>
        <Table
          caption={t('screenInviteLinks')} pager={pager}
          heads={[t('headName'), t('headStatus'), t('linkHeadUses'), t('linkHeadExpires'), t('linkHeadDomains'), t('linkHeadWho'), t('linkHeadCreated'), '']}
        >
          {items?.map(l => (
            <tr key={l.id}>
              <td class='address'>{l.name ?? <span class='muted'>{t('linkNoName')}</span>}</td>
              <td>{t('linkStatus', { status: l.status })}</td>
              <td>{t(l.maxUses === null ? 'linkUsesUnlimited' : 'linkUses', { uses: num(l.uses), max: num(l.maxUses ?? 0) })}</td>
              <td>{when(l.expiresAt)}</td>
              <td class='address'>{l.allowedDomains.length === 0 ? t('linkAnyDomain') : l.allowedDomains.join(', ')}</td>
              <td>{t(l.requiresApproval ? 'linkAsks' : 'linkJoinsAtOnce')}</td>
              <td>{when(l.createdAt)}</td>
              <td>
                {l.status !== 'revoked' && (
                  <>
                    <ConfirmButton
                      label={t('linkNewCode')} name={t('linkNewCodeFor', linkName(l))} confirm={t('linkNewCodeConfirm')} danger={false}
                      onConfirm={async () => { await regenerate(l) }}
                    />
                    <ConfirmButton label={t('linkRevoke')} name={t('linkRevokeName', linkName(l))} confirm={t('linkRevokeConfirm')} onConfirm={async () => { await revoke(l) }} />
                  </>
                )}
              </td>
            </tr>
          ))}
        </Table>
      </ListState>
    </>
  )
}
