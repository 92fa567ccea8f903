import { api, call } from '../api.js'
import { useCall } from '../hooks/use-call.js'
import { t, type WordKey } from '../i18n.js'

interface NavScreen { path: string, title: WordKey }

/**
 * The console's navigation. For an admin the Invite requests link shows how many requests wait
 * (read again with each page of news of the events feed), its accessible name unchanged and the
 * count as its description.
 */
export function Nav ({ screens, current, go, admin }: {
  screens: NavScreen[], current: NavScreen | undefined, go: (to: string) => void, admin: boolean
}) {
  const waiting = useCall(
    async () => admin
      ? await call(api.GET('/api/invite-requests', { params: { query: { status: 'pending', limit: 100 } } }))
      : { ok: true as const, data: { items: [], nextCursor: null }, response: new Response() },
    [admin], { live: true }
  )
  const n = waiting.data?.items.length ?? 0
  return (
    <nav aria-label={t('navigation')}>
      <ul>
        {screens.map(s => {
          const counted = s.path === '/console/requests' && n > 0
          return (
            <li key={s.path}>
              <a
                href={s.path} aria-current={s === current ? 'page' : undefined} aria-describedby={counted ? 'requests-count' : undefined}
                onClick={e => { if (!e.ctrlKey && !e.metaKey) { e.preventDefault(); go(s.path) } }}
              >{t(s.title)}
                {counted && <> <span class='count' aria-hidden='true'>{n >= 100 ? '99+' : n}</span></>}
              </a>
              {counted && <span id='requests-count' class='visually-hidden'>{n >= 100 ? t('requestsWaitingMany') : t('requestsWaiting', { count: n })}</span>}
            </li>
          )
        })}
      </ul>
    </nav>
  )
}
