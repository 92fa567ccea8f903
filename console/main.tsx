import { render } from 'preact'
import { App } from './app.js'
import { routeAt } from './routes.js'
import './console.css'
// The code most screens share, in the shell's shared chunk (read its header); each screen imports it too.
import './common.js'

// The console's entry (bundled by scripts/lib/console-build.ts): the live region every screen
// speaks through, then the app.

// The screen a path names starts loading now, beside the read of who is signed in, not after it.
// Not at `/`, whose screen depends on the answer (an admin's overview, a member's profile).
const opening = location.pathname === '/' ? undefined : routeAt(location.pathname, true)
opening?.load().catch(() => {}) // a failure shows when the screen is drawn (hooks/use-screen.ts)

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
