import { t, tParts, type WordKey } from '../i18n.js'

// A path of the console where no screen is: what was asked for, and the way to every screen.

export function NotFound ({ path, links }: { path: string, links: Array<{ path: string, title: WordKey }> }) {
  return (
    <>
      <p id='not-found'>{tParts('noScreenAt', { path: <code>{path}</code> })}</p>
      <h2>{t('theScreens')}</h2>
      <ul class='screen-links'>
        {links.map(l => <li key={l.path}><a href={l.path}>{t(l.title)}</a></li>)}
      </ul>
    </>
  )
}
