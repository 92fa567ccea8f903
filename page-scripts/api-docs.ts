// The API reference page (/api/docs): two repairs of the renderer's markup (Scalar 1.40.9, pinned
// for Node 20) that no theme, option or stylesheet reaches, kept as the renderer re-draws:
// - its sidebar marks entries with aria-selected on plain buttons, which only options, tabs, rows
//   and cells may carry: the selected entry becomes aria-current="true", the attribute goes;
// - its request editor's fields (CodeMirror, role=textbox) have no name: each is named after its
//   row (the parameter or header it edits), else "Value".
// Both are what axe-core reports as critical and serious (test/ops/api-docs-browser.test.ts).
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
  const repair = (root: ParentNode): void => {
    for (const el of root.querySelectorAll('button[aria-selected]')) repairSelected(el)
    for (const el of root.querySelectorAll('.cm-content[role="textbox"]')) nameField(el)
  }
  new MutationObserver(records => {
    for (const r of records) {
      if (r.type === 'attributes' && r.target instanceof Element) repairSelected(r.target)
      for (const node of r.addedNodes) {
        if (node instanceof Element) {
          if (node.matches('button[aria-selected]')) repairSelected(node)
          if (node.matches('.cm-content[role="textbox"]')) nameField(node)
          repair(node)
        }
      }
    }
  }).observe(document.documentElement, {
    subtree: true, childList: true, attributes: true, attributeFilter: ['aria-selected']
  })
  repair(document)
})()
