import t from 'tap'
import type { Locator, Page } from 'playwright-core'
import { build } from '../helpers/build.js'
import { closedPort } from '../helpers/smtp.js'
import { checkPage, launchChromium, signedInPage, skipWithoutChromium as skip, textLines } from '../helpers/browser.js'

// Member states and the company directory in the console (issues 41 and 43), in headless Chromium
// through the real pages under their CSP: Members shows each member's status and suspends and
// reactivates after a confirm step, the last active admin's Suspend off with the reason beside it;
// the Directory screen makes the workspace's SCIM key (the scim scope alone), shows it once and
// the base URL from PUBLIC_URL, revokes it, and saves the directory's settings; the new scope and
// events are offered where the console lists them. Each screen is checked by axe
// (CONSOLE_SCREENSHOTS=<dir> saves it at 1280 and 360 px); at 360 px long values wrap.

/** How wide the page is: more than the viewport means it scrolls sideways. */
async function pageWidth (page: Page): Promise<number> {
  return await page.evaluate<number>('document.documentElement.scrollWidth')
}

/** How wide the table that holds `inside` is, and its box (a wider table scrolls sideways in it). */
async function tableWidth (page: Page, inside: Locator): Promise<{ table: number, box: number }> {
  const [table = 0, box = 0] = await page.locator('.table', { has: inside }).evaluate(el => [el.scrollWidth, el.clientWidth])
  return { table, box }
}

async function open (page: Page, name: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true }).click()
  await page.getByRole('heading', { level: 1, name }).waitFor()
}

t.test('member states and the directory in the console', { skip, timeout: 300_000 }, async t => {
  const port = await closedPort()
  const base = `http://127.0.0.1:${port}`
  // The service's public address is not the one this browser uses: the Directory screen must show
  // PUBLIC_URL's (what Okta or Entra ID reach), not the page's own origin.
  const publicUrl = `http://localhost:${port}`
  const h = await build(t, { env: { PUBLIC_URL: publicUrl } })
  await h.app.listen({ port, host: '127.0.0.1' })
  const admin = await h.signIn({ role: 'admin', workspaceName: 'Acme Robotics', email: 'ada@example.com' })
  const ws = { workspaceId: admin.workspaceId }
  const grace = await h.signIn({ role: 'member', ...ws, email: 'grace@example.com' })
  const hopper = await h.signIn({ role: 'admin', ...ws, email: 'hopper@example.com' })
  const long = `${'a'.repeat(64)}@${'b'.repeat(60)}.${'c'.repeat(60)}.example.com`
  await h.signIn({ role: 'member', ...ws, email: long })
  const as = { cookie: admin.cookie }
  const statusOf = async (id: string): Promise<string | undefined> =>
    (await h.db.query<{ status: string }>('SELECT status FROM users WHERE id = $1', [id])).rows[0]?.status
  // The other admin is suspended: Ada is the last *active* admin.
  const suspended = await h.inject({ method: 'POST', url: `/api/users/${hopper.userId}/suspend`, headers: as })
  t.equal(suspended.statusCode, 200, 'the other admin suspended through the API')

  const browser = await launchChromium(t)
  const { context, page, problems } = await signedInPage(browser, base, admin.cookie)
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base })
  const row = (email: string) => page.getByRole('row', { name: new RegExp(email.replace(/[.@]/g, '\\$&')) })

  await t.test('the last active admin\'s Suspend is off, the reason beside it', async t => {
    await page.goto(`${base}/console/members`)
    await row('hopper@example.com').locator('.tag', { hasText: 'suspended' }).waitFor()
    t.pass('a suspended admin shows as suspended')
    const suspend = page.getByRole('button', { name: 'Suspend ada@example.com' })
    await page.locator('select[aria-label="Role of ada@example.com"]:disabled').waitFor()
    t.ok(await suspend.isDisabled(), 'Suspend is off for the last active admin (a suspended admin does not count)')
    t.ok(await page.getByRole('button', { name: 'Remove ada@example.com' }).isDisabled(), 'so is Remove')
    const reason = row('ada@example.com').locator('.reason')
    t.match(await reason.textContent(), /The last admin: make another member an admin before changing this role, suspending or removing them/, 'the reason, in words')
    t.equal(await suspend.getAttribute('aria-describedby'), await reason.getAttribute('id'), 'Suspend is described by it')
    t.match(await page.locator('#last-admin-rule').textContent(), /suspended/, 'the rule says it before any click')
    await checkPage(t, page, 'Members (the last active admin)')
  })

  await t.test('suspend after a confirm step, then reactivate; the status shown and the filter', async t => {
    const status = row('grace@example.com').locator('td[data-label=Status]')
    t.equal(await status.textContent(), 'active', 'each member shows their status')
    await page.getByRole('button', { name: 'Suspend grace@example.com' }).click()
    const yes = page.getByRole('button', { name: 'Yes, suspend grace@example.com' })
    await yes.waitFor()
    t.equal(await page.evaluate<string>('document.activeElement?.textContent'), 'Yes, suspend grace@example.com', 'the confirm button has the focus')
    t.equal(await statusOf(grace.userId), 'active', 'nothing happened before the confirm')
    await checkPage(t, page, 'Members (suspend asks first)')
    await yes.click()
    await page.locator('#live', { hasText: 'grace@example.com is suspended' }).waitFor()
    await status.filter({ hasText: 'suspended' }).waitFor()
    t.equal(await statusOf(grace.userId), 'suspended', 'suspended by the service')
    const me = await h.inject({ method: 'GET', url: '/api/users/me', headers: { cookie: grace.cookie } })
    t.equal(me.statusCode, 401, 'their session was revoked')
    const reactivate = page.getByRole('button', { name: 'Reactivate grace@example.com' })
    await reactivate.waitFor()
    t.equal(await page.evaluate<string>('document.activeElement?.getAttribute("aria-label")'), 'Reactivate grace@example.com', 'the focus back on the row\'s button, now Reactivate')
    await checkPage(t, page, 'Members (a suspended member)')

    await page.getByLabel('Status', { exact: true }).selectOption('suspended')
    await page.getByRole('button', { name: 'Find' }).click()
    await page.getByRole('row', { name: /ada@example\.com/ }).waitFor({ state: 'detached' })
    t.same(
      (await page.locator('tbody td.address').allTextContents()).sort(), ['grace@example.com', 'hopper@example.com'],
      'the status filter lists the suspended members only'
    )
    await page.getByLabel('Status', { exact: true }).selectOption('')
    await page.getByRole('button', { name: 'Find' }).click()
    await row('ada@example.com').waitFor()

    await reactivate.click()
    await page.getByRole('button', { name: 'Yes, reactivate grace@example.com' }).click()
    await page.locator('#live', { hasText: 'grace@example.com is active again' }).waitFor()
    await status.filter({ hasText: 'active' }).waitFor()
    t.equal(await statusOf(grace.userId), 'active', 'reactivated by the service')
  })

  await t.test('the Directory screen: the SCIM key made and shown once, the base URL, the settings, revoke', async t => {
    // An ordinary key is no directory key: the Directory screen does not list it.
    const other = await h.inject({ method: 'POST', url: '/api/api-keys', headers: as, payload: { name: 'CI audit export', scopes: ['audit:read'] } })
    t.equal(other.statusCode, 201)
    await open(page, 'Directory')
    t.equal(await page.getByLabel('SCIM base URL', { exact: true }).inputValue(), `${publicUrl}/api/scim/v2`, 'the base URL, from PUBLIC_URL')
    await page.getByRole('button', { name: 'Copy SCIM base URL' }).click()
    await page.locator('#live', { hasText: 'copied' }).waitFor()
    t.equal(await page.evaluate<string>('navigator.clipboard.readText()'), `${publicUrl}/api/scim/v2`, 'copied')
    await page.locator('#scim-keys', { hasText: 'No directory key' }).waitFor()

    // A refusal is said in words beside the form: the workspace holds as many keys as it may (10).
    const fillers = await Promise.all(Array.from({ length: 9 }, async (_, i) =>
      (await h.inject({ method: 'POST', url: '/api/api-keys', headers: as, payload: { name: `filler ${i}`, scopes: ['audit:read'] } })).json<{ id: string }>().id))
    await page.getByLabel('Name of the key').fill('Okta')
    await page.getByRole('button', { name: 'Create the directory key' }).click()
    const refused = page.locator('form:has(#scim-name) .problem')
    await refused.waitFor()
    t.equal(await refused.textContent(), 'This workspace has as many API keys as it may: revoke one first.', 'a refusal in words, beside the form')
    for (const id of fillers) await h.inject({ method: 'DELETE', url: `/api/api-keys/${id}`, headers: as })
    await page.getByRole('button', { name: 'Create the directory key' }).click()
    const secret = await page.locator('#secret-value').inputValue()
    t.match(secret, /^wsk_/, 'the key shown once')
    const keys = (await h.inject({ method: 'GET', url: '/api/api-keys', headers: as })).json<{ items: Array<{ id: string, name: string, scopes: string[], expiresAt: string | null }> }>().items
    const okta = keys.find(k => k.name === 'Okta')
    t.same(okta?.scopes, ['scim'], 'the key holds the scim scope alone')
    t.equal(okta?.expiresAt, null, 'and does not expire')
    const scim = async () => (await h.inject({ method: 'GET', url: '/api/scim/v2/ServiceProviderConfig', headers: { authorization: `Bearer ${secret}` } })).statusCode
    t.equal(await scim(), 200, 'the key opens /api/scim/v2')
    await checkPage(t, page, 'Directory (the key shown once)')
    await page.getByRole('button', { name: 'I have copied it' }).click()
    t.equal(await page.locator('#secret-value').count(), 0, 'then gone from the page')
    const listed = page.locator('#scim-keys tbody tr')
    await listed.first().waitFor()
    t.equal(await listed.count(), 1, 'the directory keys only')
    t.match(await listed.first().textContent(), /Okta/)

    // The directory's settings: the admins' group and the welcome e-mail.
    const group = 'Workspace admins'
    await page.getByLabel('Admins\' group').fill(group)
    await page.getByLabel(/Welcome e-mail/).check()
    await page.getByRole('button', { name: 'Save the directory settings' }).click()
    await page.locator('#live', { hasText: 'Directory settings saved' }).waitFor()
    const settings = async () => (await h.inject({ method: 'GET', url: '/api/workspace/settings', headers: as })).json<{ directory: unknown }>().directory
    t.same(await settings(), { adminGroup: group, welcomeEmail: true }, 'kept by the service')
    await page.getByLabel('Admins\' group').fill('')
    await page.getByRole('button', { name: 'Save the directory settings' }).click()
    await page.locator('#live', { hasText: 'no group makes admins' }).waitFor()
    t.same(await settings(), { adminGroup: null, welcomeEmail: true }, 'an empty group: the directory sets no roles')
    await checkPage(t, page, 'Directory (a key, the settings)')

    await page.getByRole('button', { name: 'Revoke Okta' }).click()
    await page.getByRole('button', { name: 'Yes, revoke Okta' }).click()
    await page.locator('#scim-keys', { hasText: 'No directory key' }).waitFor()
    t.equal(await scim(), 401, 'revoked: the directory is refused')
  })

  await t.test('a member the directory deactivated: managed by it, Reactivate off with the reason', async t => {
    const key = (await h.inject({ method: 'POST', url: '/api/api-keys', headers: as, payload: { name: 'Entra ID', scopes: ['scim'] } })).json<{ secret: string }>()
    const scim = async (method: 'POST' | 'PATCH', url: string, body: unknown) => await h.inject({
      method, url, payload: JSON.stringify(body), headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/scim+json' }
    })
    const made = await scim('POST', '/api/scim/v2/Users', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'linus@example.com' })
    t.equal(made.statusCode, 201)
    const off = await scim('PATCH', `/api/scim/v2/Users/${String(made.json().id)}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', value: { active: false } }]
    })
    t.equal(off.statusCode, 200, 'deactivated by the directory')
    await open(page, 'Members')
    const linus = row('linus@example.com')
    await linus.locator('.tag', { hasText: 'suspended' }).waitFor()
    t.match(await linus.locator('td.inviter').textContent(), /Managed by your directory/, 'who manages them, where "Invited by" was a dash')
    const reactivate = linus.getByRole('button', { name: 'Reactivate linus@example.com' })
    t.equal(await reactivate.isDisabled(), true, 'Reactivate is off')
    const reason = await reactivate.getAttribute('aria-describedby')
    t.match(await page.locator(`#${String(reason)}`).textContent(), /Your directory deactivated them: reactivate them there/, 'the reason, tied to the button')
    await checkPage(t, page, 'Members (a member the directory deactivated)')
    await open(page, 'Directory')
  })

  await t.test('360 px: long addresses, names and group names wrap', async t => {
    await page.setViewportSize({ width: 360, height: 800 })
    await page.getByLabel('Admins\' group').fill('G'.repeat(200))
    await page.getByRole('button', { name: 'Save the directory settings' }).click()
    await page.locator('#live', { hasText: 'Directory settings saved' }).waitFor()
    await page.getByLabel('Name of the key').fill(`Entra ID ${'x'.repeat(90)}`)
    await page.getByRole('button', { name: 'Create the directory key' }).click()
    await page.getByRole('button', { name: 'I have copied it' }).click()
    await page.locator('#scim-keys tbody tr').first().waitFor()
    t.ok(await pageWidth(page) <= 360, `Directory: no side scroll (${await pageWidth(page)} px)`)
    await checkPage(t, page, 'Directory (long values, 360 px)')
    await open(page, 'Members')
    await row(long).waitFor()
    t.ok(await pageWidth(page) <= 360, `Members: no side scroll (${await pageWidth(page)} px)`)
    const narrow = await tableWidth(page, row(long))
    t.ok(narrow.table <= narrow.box, `nor in the table's box (${narrow.table} of ${narrow.box} px)`)
    await checkPage(t, page, 'Members (a long address, 360 px)')
    await page.setViewportSize({ width: 1280, height: 900 })
  })

  await t.test('1280 px: a long address in the Members table wraps, whole; nothing scrolls sideways', async t => {
    await open(page, 'Members')
    const cell = row(long).locator('td.address')
    await cell.waitFor()
    t.ok(await pageWidth(page) <= 1280, `the page: no side scroll (${await pageWidth(page)} px)`)
    const wide = await tableWidth(page, cell)
    t.ok(wide.table <= wide.box, `the table: no side scroll of its own (${wide.table} of ${wide.box} px)`)
    t.equal(await cell.textContent(), long, 'the whole address, not cut')
    const box = await cell.boundingBox()
    t.ok(box !== null && box.x + box.width <= 1280, 'the cell within the window')
    t.ok(await textLines(cell) >= 2, `it wraps (${await textLines(cell)} lines)`)
    t.equal(await textLines(row('ada@example.com').locator('td.address')), 1, 'a short address stays on one line')
    await checkPage(t, page, 'Members (a long address at 1280 px)')
  })

  await t.test('the new scope and events are offered where the console lists them', async t => {
    await open(page, 'API keys')
    await page.getByRole('checkbox', { name: /company directory's SCIM 2\.0 access.*scim$/ }).waitFor()
    t.pass('API keys: the scim scope, with the contract\'s words')
    // The contract's words, its code spans as code: no literal backtick (the scim scope's words name `/api/scim/v2`).
    t.notMatch(await page.locator('main').textContent(), /`/, 'no backtick on the screen')
    t.equal(await page.locator('.scopes code', { hasText: '/api/scim/v2' }).count(), 1, 'the path shown as code')
    t.ok(await page.locator('table code', { hasText: '/api/scim/v2' }).count() >= 1, 'in the keys table too')
    for (const width of [1280, 360]) {
      await page.setViewportSize({ width, height: 900 })
      // Each group's title sits inside its box, whether or not it wraps: never across the border.
      const boxes = await page.locator('.scopes fieldset').evaluateAll(sets => sets.map(f => {
        const legend = f.querySelector('legend')?.getBoundingClientRect()
        const box = f.getBoundingClientRect()
        return { legend: legend?.top ?? 0, box: box.top, lines: Math.round((legend?.height ?? 0) / 24) }
      }))
      t.ok(boxes.every(b => b.legend > b.box), `${width} px: every legend inside its box (${boxes.filter(b => b.lines > 1).length} wrap)`)
      t.ok(await pageWidth(page) <= width, `${width} px: no side scroll`)
      await checkPage(t, page, `API keys (the scope picker, ${width} px)`)
    }
    await page.setViewportSize({ width: 1280, height: 900 })
    await open(page, 'Webhooks')
    for (const type of ['member.suspended', 'member.reactivated']) {
      t.equal(await page.getByRole('checkbox', { name: type, exact: true }).count(), 1, `Webhooks: ${type}`)
    }
    await open(page, 'Activity')
    const actions = await page.getByLabel('What').locator('option').allTextContents()
    t.ok(actions.includes('member.suspended') && actions.includes('member.reactivated'), 'Activity: the new actions')
  })

  t.same(problems, [], 'no script errors and no CSP violations')
})
