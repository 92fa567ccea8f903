import { escapeHtml } from '../lib/html.js'

// The parts the small HTML pages share (sign-up, sign-in, setup, invite links, domain join links):
// one markup and one id each, by which their scripts (page-scripts/) find them. The words are the
// page's, in its language (src/i18n/page-words.ts); arguments that are markup are the page's own,
// never text from a request (a workspace's name comes escaped).

/** The page's heading, the status line its script fills (and `hidden` until then), and the alert for errors. */
export function pageHeading (
  title: string, status: { text?: string, live?: boolean, hidden?: boolean } = {}
): string {
  const role = status.live === true ? ' role="status"' : ''
  const hidden = status.hidden === true ? ' hidden' : ''
  return `<h1>${title}</h1>
<p id="status" class="muted"${role}${hidden}>${status.text ?? ''}</p>
<p id="error" class="error" role="alert" hidden></p>`
}

/** What a link's page shows of it before the person acts: a term per fact, its value filled in by id. */
export function factList (facts: ReadonlyArray<readonly [term: string, id: string]>): string {
  return `<dl>
${facts.map(([term, id]) => `    <dt>${escapeHtml(term)}</dt><dd id="${id}"></dd>`).join('\n')}
  </dl>`
}

/** Shown by the script when the link was asked for in another browser (login CSRF); `warning` says what to do. */
export function otherBrowserWarning (warning: string): string {
  return `<p id="other-browser" class="error" hidden>${escapeHtml(warning)}</p>`
}

/** Whose session continuing ends (the script fills it when someone is signed in already). */
export const CURRENT_SESSION = '<p id="current-session" class="error" hidden></p>'

/** The optional name field, labelled in the page's language. */
export function nameField (label: string): string {
  return `<label for="name">${escapeHtml(label)}</label>
  <input id="name" name="name" maxlength="200" autocomplete="name">`
}

export function emailField (label: string): string {
  return `<label for="email">${escapeHtml(label)}</label>
  <input id="email" name="email" type="email" maxlength="254" autocomplete="email" required>`
}
