import { useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api.js'
import type { ScreenProps } from '../main.js'
import { ConfirmButton, ListState, ProblemNote, Table, announce, inviterText, usePaged, when } from '../ui.js'
import { useEffect } from 'preact/hooks'

const LAST_ADMIN_RULE = 'A workspace always keeps at least one admin: the last admin can be neither made a member nor removed. Make someone else an admin first.'

function lastAdminSentence (u: Schemas['User'], doing: string): string {
  return `${u.email} was not ${doing}: they are the workspace's last admin, and a workspace always keeps one. Make another member an admin first.`
}

type RoleFilter = Schemas['Role'] | ''

export function Members ({ me, news }: ScreenProps) {
  // The search and the role are the server's filters (GET /api/users?q=&role=), paged there too.
  const [search, setSearch] = useState('')
  const [role, setRole] = useState<RoleFilter>('')
  const [applied, setApplied] = useState<{ q: string, role: RoleFilter }>({ q: '', role: '' })
  const { items, problem, reload, pager } = usePaged(
    async cursor => await call(api.GET('/api/users', {
      params: {
        query: {
          limit: 25,
          ...(cursor === undefined ? {} : { cursor }),
          ...(applied.q === '' ? {} : { q: applied.q }),
          ...(applied.role === '' ? {} : { role: applied.role })
        }
      }
    })),
    [applied]
  )
  useEffect(() => { if (news > 0) reload() }, [news])
  const [rowProblem, setRowProblem] = useState<{ id: string, problem: Problem } | null>(null)

  const fail = (u: Schemas['User'], p: Problem, doing: string) => {
    const problem = p.code === 'LAST_ADMIN' ? { ...p, text: lastAdminSentence(u, doing) } : p
    setRowProblem({ id: u.id, problem })
    announce(problem.text)
  }
  const changeRole = async (u: Schemas['User'], role: Schemas['Role']) => {
    setRowProblem(null)
    const r = await call(api.PATCH('/api/users/{userId}', { params: { path: { userId: u.id } }, body: { role } }))
    if (r.ok) announce(`${u.email} is now ${role === 'admin' ? 'an admin' : 'a member'}.`)
    else fail(u, r.problem, role === 'member' ? 'made a member' : 'made an admin')
    reload()
  }
  const remove = async (u: Schemas['User']) => {
    setRowProblem(null)
    const r = await call(api.DELETE('/api/users/{userId}', { params: { path: { userId: u.id } } }))
    if (r.ok) announce(`${u.email} was removed from the workspace.`)
    else fail(u, r.problem, 'removed')
    reload()
  }

  return (
    <>
      <p class='muted' id='last-admin-rule'>{LAST_ADMIN_RULE}</p>
      <form
        class='card filters' role='search' aria-label='Find members'
        onSubmit={e => { e.preventDefault(); setApplied({ q: search.trim(), role }) }}
      >
        <div>
          <label for='member-search'>Name or e-mail begins with</label>
          <input id='member-search' type='search' maxLength={254} value={search} onInput={e => { setSearch(e.currentTarget.value) }} />
        </div>
        <div>
          <label for='member-role'>Role</label>
          <select id='member-role' value={role} onChange={e => { setRole(e.currentTarget.value as RoleFilter) }}>
            <option value=''>any</option>
            <option value='admin'>admin</option>
            <option value='member'>member</option>
          </select>
        </div>
        <button type='submit'>Find</button>
      </form>
      <ListState items={items} problem={problem} retry={reload} empty={applied.q === '' && applied.role === '' ? 'No members yet.' : 'No member matches.'}>
        <Table caption={`Members of ${me.workspace.name}`} heads={['Name', 'E-mail', 'Role', 'Joined', 'Invited by', '']} pager={pager}>
          {items?.map(u => (
            <tr key={u.id}>
              <td>{u.name ?? '—'}{u.id === me.user.id && <span class='muted'> (you)</span>}</td>
              <td>{u.email}</td>
              <td>
                <select
                  aria-label={`Role of ${u.email}`} aria-describedby='last-admin-rule' value={u.role}
                  onChange={e => { void changeRole(u, (e.currentTarget.value as Schemas['Role'])) }}
                >
                  <option value='admin'>admin</option>
                  <option value='member'>member</option>
                </select>
              </td>
              <td>{when(u.createdAt)}</td>
              <td class='inviter'>{inviterText(u.invitedBy)}</td>
              <td>
                <ConfirmButton label={`Remove ${u.email}`} confirm={`Yes, remove ${u.email}`} onConfirm={async () => { await remove(u) }} />
                {rowProblem?.id === u.id && <ProblemNote problem={rowProblem.problem} />}
              </td>
            </tr>
          ))}
        </Table>
      </ListState>
    </>
  )
}
