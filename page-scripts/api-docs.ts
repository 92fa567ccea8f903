// The API reference page (/api/docs): repairs of the renderer's markup (Scalar 1.40.9, pinned
// for Node 20) that no theme, option or stylesheet reaches, kept as the renderer re-draws:
// - its sidebar marks entries with aria-selected on plain buttons, which only options, tabs, rows
//   and cells may carry: the selected entry becomes aria-current="true", the attribute goes;
// - its request editor's fields (CodeMirror, role=textbox) have no name: each is named after its
//   row (the parameter or header it edits), else "Value";
// - its credential fields show a demo value as placeholder (base64 of "ALL YOUR BASE ARE BELONG TO
//   US"), which reads as a credential already filled in: it says what goes there instead;
// - who may call an operation (the cookie's role, a key's scopes, or anyone), from the contract's
//   security of each operation, is said under its title and in Test Request.
// - in Test Request, a button with role="none" and a name, and each row's unnamed checkbox;
// - a response of several media types: its example's unnamed copy button, and its media-type menu
//   drawn inside the response's disclosure button.
// The first two and the last two are what axe-core reports as critical and serious
// (test/ops/api-reference-browser.test.ts).
'use strict'

;(() => {
  const repairSelected = (el: Element): void => {
    if (el.tagName !== 'BUTTON' || el.hasAttribute('role') || !el.hasAttribute('aria-selected')) return
    const selected = el.getAttribute('aria-selected') === 'true'
    el.removeAttribute('aria-selected')
    if (selected) el.setAttribute('aria-current', 'true')
    else el.removeAttribute('aria-current')
  }
  const nameField = (el: Element): void => {
    if (el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby')) return
    const cells = Array.from(el.closest('tr')?.querySelectorAll('td') ?? [])
    const key = cells[0]?.textContent?.trim() ?? ''
    const label = cells[0]?.contains(el) === true ? 'Name' : key !== '' ? `${key} value` : 'Value'
    el.setAttribute('aria-label', label)
  }
  const DEMO_CREDENTIAL = 'QUxMIFlPVVIgQkFTRSBBUkUgQkVMT05HIFRPIFVT'
  // Which credential a field takes is known once its section has drawn (the scheme's name row may
  // come after the field): a field marked data-credential is looked at again on each pass.
  const replacePlaceholder = (el: Element): void => {
    if (el.getAttribute('placeholder') !== DEMO_CREDENTIAL && !el.hasAttribute('data-credential')) return
    let section: Element | null = el
    for (let i = 0; i < 8 && section !== null && !/service_session/.test(section.textContent ?? ''); i++) section = section.parentElement
    const cookie = section !== null && /service_session/.test(section.textContent ?? '')
    el.setAttribute('data-credential', cookie ? 'cookie' : 'key')
    const words = cookie ? 'none needed: your browser sends its own session cookie' : 'wsk_… (an API key)'
    if (el.getAttribute('placeholder') !== words) el.setAttribute('placeholder', words)
  }

  // Who may call each operation, by its summary (each summary is its operation's title in the page).
  const whoMay = new Map<string, string>()
  const code = (s: string): string => `<code>${s.replace(/[&<>]/g, c => `&#${c.charCodeAt(0)};`)}</code>`
  interface Operation { summary?: string, security?: Array<Record<string, string[]>>, 'x-api-key-admin-scope'?: string }
  const sentence = (op: Operation, global: Array<Record<string, string[]>>): string => {
    const security = op.security ?? global
    if (security.length === 0) return 'Anyone: no session or key needed.'
    const ways = security.map(req => {
      const [scheme, scopes] = Object.entries(req)[0] ?? ['', []]
      if (scheme === 'sessionCookie') {
        const roles = scopes.map(role => `${/^[aeiou]/.test(role) ? 'an' : 'a'} ${role}`).join(' or ')
        return `${scopes.length === 0 ? 'anyone' : roles} signed in (the session cookie)`
      }
      if (scheme === 'apiKey') {
        const extra = op['x-api-key-admin-scope'] !== undefined ? `, and ${code(op['x-api-key-admin-scope'])} for an admin` : ''
        return `an API key with ${scopes.map(code).join(' and ')}${extra}`
      }
      if (scheme === 'slackSignature') return 'Slack, by its request signature'
      return scheme
    })
    const keys = security.some(req => 'apiKey' in req) ? '' : ' No API key.'
    return `Who may call it: ${ways.join('; or ')}.${keys}`
  }
  const say = (root: ParentNode): void => {
    if (whoMay.size === 0) return
    for (const title of root.querySelectorAll('.section-header-label')) {
      const text = whoMay.get(title.textContent?.trim() ?? '')
      const host = title.closest('.section-header')
      if (text === undefined || host === null || host.querySelector(':scope > .who-may') !== null) continue
      const line = document.createElement('p')
      line.className = 'who-may'
      line.innerHTML = text
      host.append(line)
    }
  }
  // Test Request (a dialog, one operation at a time): the same line under its Authentication header.
  const sayInDialog = (): void => {
    if (whoMay.size === 0) return
    const dialog = document.querySelector('[role="dialog"]')
    const title = dialog === null
      ? undefined
      // Its title, shown: the dialog's own list of operations (a side panel) holds every summary too.
      : Array.from(dialog.querySelectorAll('span')).find(el => el.children.length === 0 && el.closest('aside, nav') === null &&
          el.getClientRects().length > 0 && whoMay.has(el.textContent?.trim() ?? ''))
    const summary = title?.textContent?.trim() ?? ''
    const words = whoMay.get(summary)
    if (dialog === null || words === undefined) return
    const shown = dialog.querySelector('.who-may')
    if (shown?.getAttribute('data-for') === summary) return
    shown?.remove()
    const auth = Array.from(dialog.querySelectorAll('h2')).find(h => h.textContent?.trim().startsWith('Authentication') === true)
    const header = auth?.closest('.bg-b-2') ?? title?.parentElement
    if (header === null || header === undefined) return
    const line = document.createElement('p')
    line.className = 'who-may in-dialog'
    line.setAttribute('data-for', summary)
    line.innerHTML = words
    header.after(line)
  }
  interface Contract { security?: Array<Record<string, string[]>>, paths: Record<string, Record<string, Operation>> }
  const learn = async (): Promise<void> => {
    const doc = await (await fetch('/api/openapi.json')).json() as Contract
    for (const item of Object.values(doc.paths)) {
      for (const op of Object.values(item)) {
        if (typeof op === 'object' && op !== null && typeof op.summary === 'string') {
          whoMay.set(op.summary, sentence(op, doc.security ?? []))
        }
      }
    }
    say(document)
    sayInDialog()
  }
  // Without the contract the page stays as the renderer draws it: the lines are an addition.
  learn().catch(() => {})

  // Test Request: a button given role="none" and a name ("More Information"), which no element
  // with role none may carry: it is a button, and keeps its name; each row's on/off checkbox has
  // no name: it is named after the row ("Send userId").
  const repairButtonRole = (el: Element): void => {
    if (el.tagName === 'BUTTON' && el.getAttribute('role') === 'none' && el.hasAttribute('aria-label')) el.removeAttribute('role')
  }
  const nameRowSwitch = (el: Element): void => {
    if (el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') || el.closest('label') !== null) return
    // The key as typed: the editor's line, without its placeholder ("Key") or a "Required" badge.
    const line = el.closest('tr')?.querySelector('td:nth-child(2) .cm-line')
    const placeholder = line?.querySelector('.cm-placeholder')?.textContent ?? ''
    const key = (line?.textContent ?? '').replace(placeholder, '').trim()
    el.setAttribute('aria-label', key !== '' ? `Send ${key}` : 'Send this row (empty)')
  }

  // A response with several media types (the audit export's NDJSON and CSV, the SSO pages' JSON
  // and HTML): its example card's copy button has no name, and the media-type menu is drawn inside
  // the response's disclosure button, a control within a control. The copy button is named; the
  // menu is moved to just after the disclosure button, where it looks and works the same.
  const nameCopyButton = (el: Element): void => {
    if (el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') || (el.textContent ?? '').trim() !== '') return
    el.setAttribute('aria-label', 'Copy the example')
  }
  const unnestControl = (el: Element): void => {
    const trigger = el.parentElement?.closest('button.parameter-item-trigger')
    if (trigger !== null && trigger !== undefined) trigger.after(el)
  }

  // What was added (under `root`); then, once per batch of changes, what spans the page (the
  // credential fields look at their section, the dialog at its title): not once per added node.
  const repair = (root: ParentNode): void => {
    for (const el of root.querySelectorAll('button[role="none"][aria-label]')) repairButtonRole(el)
    for (const el of root.querySelectorAll('[role="dialog"] input[type="checkbox"]')) nameRowSwitch(el)
    for (const el of root.querySelectorAll('button[aria-selected]')) repairSelected(el)
    for (const el of root.querySelectorAll('.cm-content[role="textbox"]')) nameField(el)
    for (const el of root.querySelectorAll('button.code-copy')) nameCopyButton(el)
    for (const el of root.querySelectorAll('button.parameter-item-trigger button')) unnestControl(el)
    say(root)
  }
  const repairPage = (): void => {
    for (const el of document.querySelectorAll(`[placeholder="${DEMO_CREDENTIAL}"], [data-credential]`)) replacePlaceholder(el)
    sayInDialog()
  }
  new MutationObserver(records => {
    const roots = new Set<ParentNode>()
    for (const r of records) {
      if (r.type === 'attributes' && r.target instanceof Element) repairSelected(r.target)
      for (const node of r.addedNodes) {
        if (node instanceof Element) {
          if (node.matches('button[aria-selected]')) repairSelected(node)
          if (node.matches('.cm-content[role="textbox"]')) nameField(node)
          roots.add(node.parentElement ?? node)
        }
      }
    }
    for (const root of roots) repair(root)
    if (roots.size > 0) repairPage()
  }).observe(document.documentElement, {
    subtree: true, childList: true, attributes: true, attributeFilter: ['aria-selected']
  })
  repair(document)
  repairPage()
})()
