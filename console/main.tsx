import { render } from 'preact'
import { App } from './app.js'
import './console.css'

// The console's entry (bundled by scripts/lib/console-build.ts): the live region every screen
// speaks through, then the app.

const root = document.getElementById('app')
if (root !== null) {
  const live = document.createElement('p')
  live.id = 'live'
  live.setAttribute('role', 'status')
  live.setAttribute('aria-live', 'polite')
  live.className = 'live'
  root.replaceChildren()
  document.body.append(live)
  render(<App identityProvider={root.dataset.identityProvider === 'yes'} />, root)
}
