// Shared by the page scripts: a classic script, loaded first, whose functions are globals (this
// file has no import or export, so TypeScript reads it as a script the other page scripts see).
// The calls to the service are typed by the contract (src/generated/openapi.ts): a path, its
// request body and its answers as openapi.yaml declares them.
/* exported postJson, show, errorText, onSubmit, showCurrentSession, word, fillWords, pageTimeZone */
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

/** What the server handed the script (src/http/page-shell.ts): its words, in the page's language, and the time zone. */
const pageData: { words: Record<string, string>, timeZone: string } = JSON.parse(
  document.querySelector<HTMLMetaElement>('meta[name="page-words"]')?.content ?? '{"words":{},"timeZone":"UTC"}'
) as { words: Record<string, string>, timeZone: string }

/** The workspace's time zone, for the dates the page writes (UTC when the page knows no workspace). */
const pageTimeZone = pageData.timeZone

/**
 * The page's word `key` with each placeholder (U+E000 name U+E001, as src/i18n/page-words.ts
 * `scriptWord` marks them) replaced by `values[name]`; the key itself when missing (a bug the
 * tests see). A `{name}` in the text is text: a workspace may be named so.
 */
function word (key: string, values: Record<string, string> = {}): string {
  const text = pageData.words[key] ?? key
  return text.replace(/\uE000(\w+)\uE001/g, (whole, name: string) => values[name] ?? whole)
}

/**
 * `el` filled with the word `key`: its text, and at each `{name}` of `parts` that element (an
 * address in bold the tests find by id), so the sentence keeps its language's word order.
 */
function fillWords (el: HTMLElement, key: string, parts: Record<string, HTMLElement>): void {
  el.replaceChildren(...word(key).split(/(\uE000\w+\uE001)/).map(piece => {
    const part = /^\uE000(\w+)\uE001$/.exec(piece)
    return (part !== null ? parts[part[1] ?? ''] : undefined) ?? document.createTextNode(piece)
  }))
}

function show (id: string, text: string): void {
  const el = byId(id)
  el.textContent = text
  el.hidden = false
}

/**
 * An error answer in the page's words, by its `code` (the API's `message` is English, for
 * programs); a code the page has no words for gets the generic sentence with the status.
 */
function errorText (r: { status: number, body: ErrorBody | null }): string {
  const key = 'error.' + String(r.body?.code ?? '')
  // A word may name what the answer's details say (SSO_REQUIRED: {workspace}, {connection}).
  const details = Object.fromEntries(Object.entries(r.body?.details ?? {}).filter(([, v]) => typeof v === 'string'))
  if (key in pageData.words) return word(key, details as Record<string, string>)
  return word('error.generic', { status: String(r.status) })
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
  const who = { email: me.user.email, workspace: me.workspace.name }
  el.textContent = next === null ? word('session.signedIn', who) : word('session.signedInSwitch', { ...who, next })
  el.hidden = false
}
