import type { Schemas } from './api.js'

// What every screen is given (the route table, routes.ts, lists the screens). Its own module, so
// a screen never imports the table, nor the table's entry (main.tsx): no import circle.

export interface ScreenProps {
  me: Schemas['Me']
  /** Read who is signed in again (after a change to the workspace, e.g. its name). */
  refresh: () => void
}
