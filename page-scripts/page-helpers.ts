// Shared by the page scripts: a classic script, loaded first, whose functions are globals (this
// file has no import or export, so TypeScript reads it as a script the other page scripts see).
// The calls to the service are typed by the contract (src/generated/openapi.ts): a path, its
// request body and its answers as openapi.yaml declares them.
/* exported postJson, show, errorText, onSubmit, showCurrentSession */
'use strict'

type Paths = import('../src/generated/openapi.js').paths
type ErrorBody = import('../src/generated/openapi.js').components['schemas']['ErrorResponse']
type Me = import('../src/generated/openapi.js').components['schemas']['Me']

/** The contract's paths that take a POST. */
type PostPath = { [P in keyof Paths]: Paths[P]['post'] extends { responses: object } ? P : never }[keyof Paths]
type PostOp<P extends PostPath> = Paths[P]['post'] & { responses: object }
type JsonOf<T> = T extends { content: { 'application/json': infer B } } ? B : never
type PostBody<P extends PostPath> = JsonOf<NonNullable<PostOp<P>['requestBody']>>
/** The JSON of a 2xx answer, each status with its own body. */
type PostOk<P extends PostPath> = {
  [S in keyof PostOp<P>['responses']]: S extends 200 | 201 | 202
    ? { ok: true, status: S, body: JsonOf<PostOp<P>['responses'][S]> }
    : never
}[keyof PostOp<P>['responses']]
/** An answer: a 2xx with its declared body, or a failure with the ErrorResponse (null when none could be read). */
type Answer<P extends PostPath> = PostOk<P> | { ok: false, status: number, body: ErrorBody | null }

/** The element with this id; the pages are ours, so a missing one is a bug, not a state. */
function byId (id: string): HTMLElement {
  const el = document.getElementById(id)
  if (el === null) throw new Error(`#${id} is missing from the page`)
  return el
}

function inputById (id: string): HTMLInputElement | HTMLButtonElement {
  return byId(id) as HTMLInputElement | HTMLButtonElement
}

/**
 * POST JSON to one of the contract's operations; `{name}` segments of the path are filled from
 * `params` (each encoded).
 */
async function postJson<P extends PostPath> (
  path: P, body: PostBody<P>, params: Record<string, string> = {}
): Promise<Answer<P>> {
  const url = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ''))
  const res = await fetch(url, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body)
  })
  let data: unknown = null
  try { data = await res.json() } catch {}
  return { ok: res.ok, status: res.status, body: data } as Answer<P>
}

function show (id: string, text: string): void {
  const el = byId(id)
  el.textContent = text
  el.hidden = false
}

/** The service's own message (ErrorResponse.message), or a generic one. */
function errorText (r: { status: number, body: ErrorBody | null }): string {
  if (r.body !== null && typeof r.body.message === 'string') return r.body.message
  return 'Something went wrong (' + String(r.status) + '). Try again.'
}

/**
 * A form's submit, sent once at a time: the button disabled and the last error hidden while
 * `send` runs, the button enabled again after (a page that navigates away leaves it so). A form
 * with two submit buttons takes one call per button: each runs on its own button's submit (Enter
 * in a field submits with the first).
 */
function onSubmit (form: HTMLElement, buttonId: string, send: () => Promise<void>): void {
  form.addEventListener('submit', async event => {
    const button = inputById(buttonId)
    if (event.submitter !== null && event.submitter !== button) return
    event.preventDefault()
    button.disabled = true
    byId('error').hidden = true
    try { await send() } finally { button.disabled = false }
  })
}

/**
 * A page that signs this browser in never replaces a session silently: when the browser is signed
 * in already (to another account than `next`, the one the page would sign in as; any account when
 * `next` is null), #current-session says whose session continuing ends.
 */
async function showCurrentSession (next: string | null): Promise<void> {
  const el = byId('current-session')
  let me: Me | null = null
  try {
    const res = await fetch('/api/users/me', { credentials: 'same-origin' })
    if (res.ok) me = await res.json() as Me
  } catch {}
  if (me === null || (next !== null && me.user.email === next)) { el.hidden = true; return }
  el.textContent = 'This browser is signed in as ' + me.user.email + ' (' + me.workspace.name + '). ' +
    'Continuing signs it out of that account' + (next === null ? '.' : ' and in as ' + next + '.')
  el.hidden = false
}
