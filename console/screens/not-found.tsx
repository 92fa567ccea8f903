// A path of the console where no screen is: what was asked for, and the way to every screen.

export function NotFound ({ path, links }: { path: string, links: Array<{ path: string, title: string }> }) {
  return (
    <>
      <p id='not-found'>There is no screen at <code>{path}</code>. It may have moved, or the address has a typo.</p>
      <h2>The screens</h2>
      <ul class='screen-links'>
        {links.map(l => <li key={l.path}><a href={l.path}>{l.title}</a></li>)}
      </ul>
    </>
  )
}
