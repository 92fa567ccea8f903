import { useLayoutEffect, useRef, useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api.js'
import type { ScreenProps } from '../screen.js'
import { announce } from '../announce.js'
import { inviterText, when } from '../format.js'
import { ConfirmButton } from '../components/confirm-button.js'
import { ProblemNote } from '../components/problem-note.js'
import { ListState, Table } from '../components/table.js'
import { useCall } from '../hooks/use-call.js'
import { usePaged } from '../hooks/use-paged.js'
import { screenWordsOf } from '../i18n.js'
import type own from '../../src/i18n/catalogues/en/console-members.json'

const { t } = screenWordsOf<typeof own>('members')

/** What was refused the last admin (memLastAdminRefused's `doing`). */
type Doing = 'member' | 'admin' | 'suspended' | 'reactivated' | 'removed'

type RoleFilter = Schemas['Role'] | ''
type StatusFilter = Schemas['MemberStatus'] | ''

/**
 * A member's role: picking the other one asks first ("Make ada@… an admin?"), the confirm button
 * taking the focus; Cancel puts the menu back. The last admin's menu is disabled, the reason beside it.
 */
function RoleCell ({ u, lastAdmin, onChange }: { u: Schemas['User'], lastAdmin: boolean, onChange: (role: Schemas['Role']) => Promise<void> }) {
  const [asked, setAsked] = useState<Schemas['Role'] | null>(null)
  const [busy, setBusy] = useState(false)
  const yes = useRef<HTMLButtonElement>(null)
  const menu = useRef<HTMLSelectElement>(null)
  const wasAsked = useRef(false)
  useLayoutEffect(() => {
    if (asked !== null) yes.current?.focus()
    else if (wasAsked.current) menu.current?.focus()
    wasAsked.current = asked !== null
  }, [asked])
  return (
    <>
      <select
        ref={menu} aria-label={t('memRoleOf', { email: u.email })} aria-describedby={lastAdmin ? `last-admin-${u.id}` : 'last-admin-rule'}
        value={asked ?? u.role} disabled={lastAdmin || busy}
        onChange={e => { const role = e.currentTarget.value as Schemas['Role']; setAsked(role === u.role ? null : role) }}
      >
        <option value='admin'>{t('memRole', { role: 'admin' })}</option>
        <option value='member'>{t('memRole', { role: 'member' })}</option>
      </select>
      {asked !== null && (
        <span class='confirm'>
          <button
            type='button' ref={yes} class='danger' disabled={busy}
            onClick={async () => { setBusy(true); try { await onChange(asked) } finally { setBusy(false); setAsked(null) } }}
          >{t('memMakeConfirm', { role: asked, email: u.email })}
          </button>
          <button type='button' onClick={() => { setAsked(null) }}>{t('memCancel')}</button>
        </span>
      )}
    </>
  )
}

/** A filter of the list: one of `values` (each in words, `word`), or any (''). */
function Filter<T extends string> ({ id, label, value, values, word, onChange }: {
  id: string, label: string, value: T | '', values: T[], word: (v: T) => string, onChange: (v: T | '') => void
}) {
  return (
    <div>
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={e => { onChange(e.currentTarget.value as T | '') }}>
        <option value=''>{t('memAny')}</option>
        {values.map(v => <option key={v} value={v}>{word(v)}</option>)}
      </select>
    </div>
  )
}

export function Members ({ me }: ScreenProps) {
  // The search and the role are the server's filters (GET /api/users?q=&role=), paged there too.
  const [search, setSearch] = useState('')
  const [role, setRole] = useState<RoleFilter>('')
  const [status, setStatus] = useState<StatusFilter>('')
  const [applied, setApplied] = useState<{ q: string, role: RoleFilter, status: StatusFilter }>({ q: '', role: '', status: '' })
  const { items, problem, reload, pager } = usePaged(
    async cursor => await call(api.GET('/api/users', {
      params: {
        query: {
          limit: 25,
          ...(cursor === undefined ? {} : { cursor }),
          ...(applied.q === '' ? {} : { q: applied.q }),
          ...(applied.role === '' ? {} : { role: applied.role }),
          ...(applied.status === '' ? {} : { status: applied.status })
        }
      }
    })),
    [applied]
  )
  // The active admins, two at most: one alone is the last, whose role, suspension and removal are refused.
  const admins = useCall(async () => await call(api.GET('/api/users', { params: { query: { role: 'admin', status: 'active', limit: 2 } } })), [], { live: true })
  const lastAdminId = admins.data?.items.length === 1 ? admins.data.items[0]?.id : undefined
  const [rowProblem, setRowProblem] = useState<{ id: string, problem: Problem } | null>(null)
  const changed = () => { reload(); admins.reload() }

  const fail = (u: Schemas['User'], p: Problem, doing: Doing) => {
    const problem = p.code === 'LAST_ADMIN' ? { ...p, text: t('memLastAdminRefused', { email: u.email, doing }) } : p
    setRowProblem({ id: u.id, problem })
    announce(problem.text)
  }
  const changeRole = async (u: Schemas['User'], role: Schemas['Role']) => {
    setRowProblem(null)
    const r = await call(api.PATCH('/api/users/{userId}', { params: { path: { userId: u.id } }, body: { role } }))
    if (r.ok) announce(t('memNowRole', { email: u.email, role }))
    else fail(u, r.problem, role)
    changed()
  }
  // Suspend an active member, reactivate a suspended one (POST /api/users/{userId}/suspend | reactivate).
  const toggle = async (u: Schemas['User']) => {
    setRowProblem(null)
    const path = { params: { path: { userId: u.id } } }
    const suspend = u.status === 'active'
    const r = await call(suspend ? api.POST('/api/users/{userId}/suspend', path) : api.POST('/api/users/{userId}/reactivate', path))
    if (r.ok) announce(t(suspend ? 'memSuspendedDone' : 'memReactivatedDone', { email: u.email }))
    else fail(u, r.problem, suspend ? 'suspended' : 'reactivated')
    changed()
  }
  const remove = async (u: Schemas['User']) => {
    setRowProblem(null)
    const r = await call(api.DELETE('/api/users/{userId}', { params: { path: { userId: u.id } } }))
    if (r.ok) announce(t('memRemovedDone', { email: u.email }))
    else fail(u, r.problem, 'removed')
    changed()
  }

  return (
    <>
      <p class='muted' id='last-admin-rule'>{t('memLastAdminRule')}</p>
      <form
        class='card filters' role='search' aria-label={t('memFindMembers')}
        onSubmit={e => { e.preventDefault(); setApplied({ q: search.trim(), role, status }) }}
      >
        <div>
          <label for='member-search'>{t('memSearchLabel')}</label>
          <input id='member-search' type='search' maxLength={254} value={search} onInput={e => { setSearch(e.currentTarget.value) }} />
        </div>
        <Filter id='member-role' label={t('headRole')} value={role} values={['admin', 'member']} word={r => t('memRole', { role: r })} onChange={setRole} />
        <Filter id='member-status' label={t('headStatus')} value={status} values={['active', 'suspended']} word={s => t('memStatus', { status: s })} onChange={setStatus} />
        <button type='submit'>{t('memFind')}</button>
      </form>
      <ListState items={items} problem={problem} retry={reload} empty={t(applied.q === '' && applied.role === '' && applied.status === '' ? 'memNoneYet' : 'memNoneMatch')}>
        <Table
          caption={t('memCaption', { workspace: me.workspace.name })} pager={pager}
          heads={[t('headName'), t('headEmail'), t('headStatus'), t('headRole'), t('memHeadJoined'), t('memHeadInvitedBy'), '']}
        >
          {items?.map(u => {
            const last = u.id === lastAdminId
            // Deactivated by their directory: the directory alone reactivates them (403 MANAGED_BY_DIRECTORY).
            const byDirectory = u.status === 'suspended' && u.suspendedBy === 'directory'
            const why = last ? `last-admin-${u.id}` : byDirectory ? `directory-${u.id}` : undefined
            return (
              <tr key={u.id}>
                <td>{u.name ?? '—'}{u.id === me.user.id && <span class='muted'> {t('memYou')}</span>}</td>
                <td class='address'>{u.email}</td>
                <td><span class={u.status === 'active' ? 'tag' : 'tag off'}>{t('memStatus', { status: u.status })}</span></td>
                <td>
                  <RoleCell u={u} lastAdmin={last} onChange={async r => { await changeRole(u, r) }} />
                  {last && <p class='reason' id={`last-admin-${u.id}`}>{t('memLastAdminReason')}</p>}
                </td>
                <td>{when(u.createdAt)}</td>
                <td class='inviter'>
                  {u.invitedBy == null && u.managedBy === 'directory' ? t('memManaged') : inviterText(u.invitedBy)}
                  {u.invitedBy != null && u.managedBy === 'directory' && <span class='muted'> · {t('memAlsoManaged')}</span>}
                </td>
                <td>
                  <ConfirmButton
                    label={t(u.status === 'active' ? 'memSuspend' : 'memReactivate')} name={t(u.status === 'active' ? 'memSuspendName' : 'memReactivateName', { email: u.email })}
                    confirm={t(u.status === 'active' ? 'memSuspendConfirm' : 'memReactivateConfirm', { email: u.email })} danger={u.status === 'active'} disabled={last || byDirectory}
                    describedBy={why} onConfirm={async () => { await toggle(u) }}
                  />
                  {byDirectory && !last && <p class='reason' id={`directory-${u.id}`}>{t('memDirectoryReason')}</p>}
                  <ConfirmButton
                    label={t('memRemove')} name={t('memRemoveName', { email: u.email })} confirm={t('memRemoveConfirm', { email: u.email })} disabled={last}
                    describedBy={last ? `last-admin-${u.id}` : undefined} onConfirm={async () => { await remove(u) }}
                  />
                  {rowProblem?.id === u.id && <ProblemNote problem={rowProblem.problem} />}
                </td>
              </tr>
            )
          })}
        </Table>
      </ListState>
    </>
  )
}
