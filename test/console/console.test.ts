import t, { type Test } from 'tap'
import type { Page } from 'playwright-core'
import { build, principalOf } from '../helpers/build.js'
import { closedPort, startSmtp, type CaughtMail } from '../helpers/smtp.js'
import { checkPage, launchChromium, pageProblems, signedInPage, skipWithoutChromium as skip, withCookie } from '../helpers/browser.js'
import { startFakeHttp } from '../helpers/fake-http.js'
import { until } from '../helpers/service-process.js'
import { Webhook } from 'standardwebhooks'
import type { Principal } from '../../src/principal.js'
import { slackEnv, startSlackFake } from '../helpers/slack.js'

// The admin console in headless Chromium on the embedded defaults (PGlite, the service's own
// e-mail through a loopback SMTP peer, Slack's Web API faked on loopback): every screen as an
// admin, then as a member, each checked by axe-core (zero serious or critical violations). One
// browser for the file; each test walks several screens, as a person would, through the real
// pages under their real CSP.

function linkIn (mail: CaughtMail, base: string, path: string): string {
  const m = new RegExp(`${base.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}${path}\\?token=[A-Za-z0-9_-]+`).exec(mail.text)
  if (m === null) throw new Error(`no ${path} link in: ${mail.text}`)
  return m[0]
}

const checked: string[] = []

// CONSOLE_SCREENSHOTS=docs/img: each screen the test checks is also saved at 1280 and 360 px
// (full page) into that directory, as console-<screen>-<width>.png (checkPage, test/helpers/browser.ts).

async function axe (t: Test, page: Page, screen: string): Promise<void> {
  const r = await checkPage(t, page, screen)
  checked.push(`${screen} (${r.passes} rules passed, ${r.minor} minor)`)
}

/**
 * The live region's text once it says `expected`, or what it says after 5 s: announce() clears
 * it and sets the sentence 30 ms later (so a repeated sentence is announced again).
 */
async function liveText (page: Page, expected: RegExp): Promise<string | null> {
  await page.locator('#live', { hasText: expected }).waitFor({ timeout: 5000 }).catch(() => {})
  return await page.locator('#live').textContent()
}

/**
 * Opens a screen from the nav and returns the document's title as it was when the screen's heading
 * appeared: read in the page by a MutationObserver, whose callback runs right after the task that
 * changed the heading. A title set a frame later (a plain effect) would still be the old screen's,
 * which is what a screen reader announcing the navigation would read.
 */
async function open (page: Page, name: string): Promise<string> {
  // A string, not a function: the test's compiler names functions with a helper the page lacks.
  // void: evaluate would otherwise wait for the promise, which the click below resolves.
  await page.evaluate(`void (window.titleAtHeading = new Promise(resolve => {
    const shown = () => document.querySelector('h1')?.textContent === ${JSON.stringify(name)}
    if (shown()) { resolve(document.title); return }
    const o = new MutationObserver(() => { if (shown()) { o.disconnect(); resolve(document.title) } })
    o.observe(document.body, { subtree: true, childList: true, characterData: true })
  }))`)
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true }).click()
  await page.getByRole('heading', { level: 1, name }).waitFor()
  return await page.evaluate<string>('window.titleAtHeading')
}

// Eleven screens and states walked, each checked by axe: well under the 300 s file limit on an idle
// machine, past it under heavy load (340 s at a load average of 33 on 2 cores). A hang still fails.
t.setTimeout(600_000)

t.test('the console in a browser, as an admin and as a member', { skip, timeout: 600_000 }, async t => {
  const smtp = await startSmtp(t)
  const slack = await startSlackFake(t)
  const port = await closedPort()
  const base = `http://127.0.0.1:${port}`
  // Ten invitation e-mails an hour per workspace: the main workspace sends fewer; the budget test
  // spends a workspace of its own.
  const h = await build(t, {
    env: {
      ...slackEnv(slack.fake, { APP_URL: base }), SMTP_URL: smtp.url, PUBLIC_URL: base, JOBS_POLL_MS: '500', INVITE_EMAILS_PER_HOUR: '10'
    }
  })
  await h.app.listen({ port, host: '127.0.0.1' })
  const admin = await h.signIn({ role: 'admin', workspaceName: 'Acme Robotics', email: 'ada@example.com' })
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId, email: 'grace@example.com' })

  const browser = await launchChromium(t)
  const { context, page, problems } = await signedInPage(browser, base, admin.cookie)

  await t.test('profile: who is signed in, the nav of every screen, a favicon', async t => {
    const favicon = page.waitForResponse(r => r.url() === `${base}/favicon.svg`)
    await page.goto(`${base}/`)
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
    t.equal((await favicon).status(), 200, 'the page links its icon, which is served')
    t.equal(await page.title(), 'Overview · Acme Robotics', 'an admin lands on the overview')
    t.same(
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link').allTextContents(),
      ['Overview', 'Members', 'Invitations', 'Invite links', 'Invite requests', 'API keys', 'Webhooks', 'Domains', 'Directory', 'SSO', 'Activity', 'Settings', 'Profile']
    )
    await open(page, 'Profile')
    await page.locator('#me-email', { hasText: admin.email }).waitFor()
    t.equal(await page.title(), 'Profile · Acme Robotics')
    await axe(t, page, 'Profile (admin)')
  })

  let signupLink = ''
  await t.test('invitations: three pasted addresses, three results; resend kills the old link', async t => {
    const title = await open(page, 'Invitations')
    t.equal(new URL(page.url()).pathname, '/console/invitations')
    t.equal(title, 'Invitations · Acme Robotics', 'the title changes with the heading')
    const seen = smtp.messages.length
    await page.fill('#invite-emails', 'newbie@example.com, not-an-address\ngrace@example.com')
    await page.click('button[type=submit]')
    const results = page.locator('.results li')
    await results.nth(2).waitFor()
    t.same(
      await results.evaluateAll(els => els.map(e => [e.querySelector('strong')?.textContent, e.getAttribute('data-outcome')])),
      [['newbie@example.com', 'invited'], ['not-an-address', 'invalid'], ['grace@example.com', 'member']],
      'one result per address: invited, invalid, already a member'
    )
    t.match(await liveText(page, /1 of 3 invited/), /1 of 3 invited/, 'and the live region says so')
    const first = linkIn(await smtp.nextMessage(seen), base, '/signup')
    await page.getByRole('row', { name: /newbie@example\.com/ }).waitFor()
    t.equal(await page.getByRole('row', { name: /newbie@example\.com/ }).locator('td.inviter').textContent(), 'ada@example.com (web)',
      'who invited, through which door')
    await axe(t, page, 'Invitations (admin)')

    // Resend by keyboard: focus the button, press Enter.
    const again = smtp.messages.length
    await page.getByRole('button', { name: 'Resend to newbie@example.com' }).focus()
    await page.keyboard.press('Enter')
    await page.locator('#live', { hasText: 'the old link no longer works' }).waitFor()
    signupLink = linkIn(await smtp.nextMessage(again), base, '/signup')
    t.not(signupLink, first, 'a fresh link was e-mailed')
    const old = await context.request.post(`${base}/api/auth/invitation`, { data: { token: new URL(first).searchParams.get('token') } })
    t.equal(old.status(), 400, 'the old link is dead')
    t.equal((await old.json() as { code: string }).code, 'TOKEN_INVALID')

    // Revoke: another invitation, revoked with the keyboard (the confirm button takes the focus).
    await page.fill('#invite-emails', 'revoke-me@example.com')
    await page.click('button[type=submit]')
    await page.getByRole('button', { name: 'Revoke revoke-me@example.com' }).focus()
    await page.keyboard.press('Enter')
    t.equal(await page.evaluate<string>('document.activeElement?.textContent'), 'Yes, revoke revoke-me@example.com', 'the confirm button has the focus')
    await page.keyboard.press('Enter')
    await page.locator('#live', { hasText: 'revoke-me@example.com was revoked' }).waitFor()
    await page.getByRole('button', { name: 'revoked', exact: true }).click()
    await page.getByRole('row', { name: /revoke-me@example\.com/ }).waitFor()
    t.pass('the revoked invitation is listed under revoked')

    // A CSV file of email,role (POST /api/invitations/batch): a result per row, inline, each in its role.
    await page.setInputFiles('#invite-csv', {
      name: 'people.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('email,role\ncsv-admin@example.com,admin\ncsv-member@example.com,member\nnot-an-address,member\n')
    })
    await page.locator('#live', { hasText: '3 rows read from people.csv' }).waitFor()
    await page.click('button[type=submit]')
    await page.locator('.results li', { hasText: 'not-an-address' }).waitFor()
    t.same(
      await results.evaluateAll(els => els.map(e => [e.querySelector('strong')?.textContent, e.getAttribute('data-outcome')])),
      [['csv-admin@example.com', 'invited'], ['csv-member@example.com', 'invited'], ['not-an-address', 'invalid']],
      'the CSV file\'s rows, each with its result'
    )
    t.match(await results.first().textContent(), /invited as admin/, 'in the role its row names')
    await axe(t, page, 'Invitations (CSV results)')
  })

  await t.test('members: the invitee signs up and appears without a reload; roles; the last admin', async t => {
    await open(page, 'Members')
    await page.getByRole('row', { name: /grace@example\.com/ }).waitFor()
    t.equal(await page.getByRole('row', { name: /newbie@example\.com/ }).count(), 0, 'not a member yet')

    const invitee = await browser.newContext()
    const signup = await invitee.newPage()
    await signup.goto(signupLink)
    await signup.fill('#name', 'Newbie Person')
    await signup.click('#accept-button')
    await signup.waitForURL(`${base}/`)
    await signup.locator('#me-email', { hasText: 'newbie@example.com' }).waitFor()
    await invitee.close()

    await t.resolves(page.getByRole('row', { name: /newbie@example\.com/ }).waitFor({ timeout: 15_000 }), 'the new member shows in Members without a reload')
    t.equal(await page.getByRole('row', { name: /newbie@example\.com/ }).locator('td.inviter').textContent(), 'ada@example.com (web)',
      'who invited them, through which door')

    // A role change asks first; the confirm button takes the focus (Enter confirms).
    const role = page.getByRole('combobox', { name: 'Role of newbie@example.com' })
    await role.focus()
    await role.selectOption('admin')
    await page.getByRole('button', { name: 'Yes, make newbie@example.com an admin' }).waitFor()
    t.equal(await page.evaluate<string>('document.activeElement?.textContent'), 'Yes, make newbie@example.com an admin', 'the confirm button has the focus')
    await page.keyboard.press('Enter')
    await page.locator('#live', { hasText: 'newbie@example.com is now an admin' }).waitFor()
    await role.selectOption('member')
    await page.getByRole('button', { name: 'Yes, make newbie@example.com a member' }).click()
    await page.locator('#live', { hasText: 'newbie@example.com is now a member' }).waitFor()

    // The last admin: their role menu and Remove are disabled, the reason beside them.
    t.match(await page.locator('#last-admin-rule').textContent(), /always keeps at least one admin/, 'the rule, before the click')
    const adaRole = page.getByRole('combobox', { name: 'Role of ada@example.com' })
    await page.locator('select[aria-label="Role of ada@example.com"]:disabled').waitFor()
    t.ok(await adaRole.isDisabled(), 'the last admin\'s role menu is disabled')
    t.ok(await page.getByRole('button', { name: 'Remove ada@example.com' }).isDisabled(), 'and their Remove')
    t.match(await page.getByRole('row', { name: /ada@example\.com/ }).locator('.reason').textContent(), /The last admin: make another member an admin/, 'the reason, shown')
    t.equal(await adaRole.inputValue(), 'admin', 'still an admin')
    await axe(t, page, 'Members (admin)')
  })

  await t.test('API keys: scopes in words, the key shown once with a warning, afterwards only its prefix', async t => {
    // A key made by a script's admin earlier, five days from its end: the screen warns of it.
    await h.app.services.apiKeys.create(principalOf(admin, 'admin'), {
      name: 'CI audit export', scopes: ['audit:read'], expiresAt: new Date(Date.now() + 5 * 86_400_000).toISOString()
    })
    const title = await open(page, 'API keys')
    t.equal(title, 'API keys · Acme Robotics', 'the title changes with the heading')
    t.match(await page.getByRole('status').filter({ hasText: 'expire' }).textContent(), /CI audit export \(Expires in 5 days\)/,
      'a key about to expire is announced')
    await page.fill('#key-name', 'assistant')
    await page.getByRole('button', { name: 'Create the key' }).click()
    t.match(await liveText(page, /at least one/), /Choose at least one thing the key may do/, 'no scope: asked for one')
    const invitations = page.getByRole('group', { name: 'Invite people and manage invitations' })
    await invitations.getByRole('checkbox', { name: /Invite people; re-send and revoke invitations/ }).check()
    await invitations.getByRole('checkbox', { name: /See invitations/ }).check()
    await page.selectOption('#key-expiry', { label: '30 days' })
    await page.getByRole('button', { name: 'Create the key' }).click()
    const secret = await page.locator('#secret-value').inputValue()
    t.ok(secret.length >= 20, 'the key, in full, once')
    t.match(await page.locator('.secret .warning').textContent(), /shown only this once/, 'with a clear warning')
    await axe(t, page, 'API keys (admin, a key shown once)')
    await page.getByRole('button', { name: 'I have copied it' }).click()
    const row = page.getByRole('row', { name: /assistant/ })
    await row.waitFor()
    const prefix = (await row.locator('code').textContent() ?? '').replace('…', '')
    t.ok(prefix.length > 0 && secret.startsWith(prefix), `listed by its prefix (${prefix}…)`)
    t.notOk((await page.content()).includes(secret), 'the page no longer holds the key')
    t.same(
      await row.locator('li').allTextContents(),
      ['See invitations, batches and the funnel.', 'Invite people; re-send and revoke invitations.'],
      'what the key may do, in the contract\'s words'
    )
    t.match(await row.textContent(), /ada@example\.com/, 'and who made it')
    const listed = (await h.inject({ url: '/api/api-keys', headers: { cookie: admin.cookie } })).json().items as
      Array<{ name: string, scopes: string[], expiresAt: string | null }>
    const made = listed.find(k => k.name === 'assistant')
    t.same(made?.scopes, ['invitations:read', 'invitations:write'], 'the key holds the two scopes chosen')
    const days = (Date.parse(made?.expiresAt ?? '') - Date.now()) / 86_400_000
    t.ok(days > 29 && days <= 30, `and expires in 30 days (${days.toFixed(2)})`)
    await axe(t, page, 'API keys (admin, scopes listed)')
  })

  await t.test('webhooks: a test event reaches a loopback receiver and shows in the deliveries', async t => {
    const receiver = await startFakeHttp(t)
    receiver.on('POST /hook', () => ({ status: 204 }))
    const url = `${receiver.url}/hook`
    await open(page, 'Webhooks')
    await page.fill('#hook-url', url)
    await page.getByRole('checkbox', { name: 'member.removed' }).check()
    await page.getByRole('button', { name: 'Add the endpoint' }).click()
    const secret = await page.locator('#secret-value').inputValue()
    t.match(secret, /^whsec_/, 'the signing secret, shown once')
    await page.getByRole('button', { name: 'I have copied it' }).click()
    await page.getByRole('button', { name: `Send a test event to ${url}` }).click()
    await page.locator('#live', { hasText: 'A test event is on its way' }).waitFor()
    const got = await until('the test event at the receiver', async () => receiver.requests.find(r => r.path === '/hook'), 20_000)
    t.ok(new Webhook(secret).verify(got.body, {
      'webhook-id': String(got.headers['webhook-id']),
      'webhook-timestamp': String(got.headers['webhook-timestamp']),
      'webhook-signature': String(got.headers['webhook-signature'])
    }), 'signed with the secret shown once (standardwebhooks verifies it)')
    t.match(got.json, { type: 'webhook.test', source: 'web' })
    const delivery = page.getByRole('row', { name: /webhook\.test/ })
    await until('the delivery listed as succeeded', async () => {
      if (await delivery.count() === 1 && /succeeded/.test(await delivery.textContent() ?? '')) return true
      await page.getByRole('button', { name: 'Refresh deliveries' }).click()
      return undefined
    }, 20_000)
    t.match(await delivery.textContent(), /webhook\.test.*succeeded.*1.*204/, 'event, status, attempts, response code')
    await axe(t, page, 'Webhooks (admin, an endpoint with its deliveries)')
  })

  await t.test('settings: the invite policy changed, the workspace renamed, Slack installed and uninstalled, sign-on state', async t => {
    await open(page, 'Settings')
    await page.getByRole('radio', { name: /Members ask/ }).check()
    await page.locator('#live', { hasText: 'Invite policy saved: Members ask' }).waitFor()
    t.match(await page.locator('#slack-state').textContent(), /Not installed/, 'Slack: available, not installed')
    t.match(await page.locator('#idp-state').textContent(), /Not configured/, 'identity provider: read-only state')

    // Install: Slack's authorize page (the fake has none) approves at once, back to the callback.
    slack.fake.on('GET /oauth/v2/authorize', req => ({
      status: 302,
      headers: { location: `${base}/api/oauth/slack/callback?code=good-code&state=${encodeURIComponent(req.query.get('state') ?? '')}` }
    }))
    await page.getByRole('link', { name: 'Install in Slack' }).click()
    await page.waitForURL(`${base}/`)
    await open(page, 'Settings')
    await page.locator('#slack-state', { hasText: 'Installed in Acme on Slack' }).waitFor()
    await axe(t, page, 'Settings (admin, Slack installed)')

    // Uninstall by keyboard: the confirm step takes the focus; after it, the install link has it.
    await page.getByRole('button', { name: 'Uninstall from Slack' }).focus()
    await page.keyboard.press('Enter')
    t.equal(await page.evaluate<string>('document.activeElement?.textContent'), 'Yes, uninstall: revoke the bot token', 'the confirm button has the focus')
    await page.keyboard.press('Enter')
    await page.locator('#live', { hasText: 'The Slack app was uninstalled' }).waitFor()
    await page.locator('#slack-state', { hasText: 'Not installed' }).waitFor()
    t.equal(await page.evaluate<string>('document.activeElement?.id'), 'slack-install', 'the focus returns to the install link')
    t.equal(slack.calls('auth.revoke').length, 1, 'the bot token was revoked at Slack')
    await page.fill('#ws-name', 'Acme Robotics Ltd')
    await page.getByRole('button', { name: 'Rename' }).click()
    await page.locator('#live', { hasText: 'The workspace is now called Acme Robotics Ltd' }).waitFor()
    await page.locator('.brand', { hasText: 'Acme Robotics Ltd' }).waitFor()
    t.equal(await page.title(), 'Settings · Acme Robotics Ltd', 'the new name in the title and header')
    await axe(t, page, 'Settings (admin)')
  })

  await t.test('requests: a member asks (the policy allows it now), an admin approves with a role', async t => {
    const asker: Principal = {
      kind: 'chat',
      userId: member.userId,
      workspaceId: admin.workspaceId,
      email: member.email,
      name: null,
      role: 'member',
      sessionId: null,
      apiKeyId: null,
      requestId: null
    }
    await open(page, 'Invite requests')
    await page.getByText('No pending requests.').waitFor()
    await h.app.services.inviteRequests.request(asker, { email: 'asked-for@example.com', role: 'member' })
    await t.resolves(page.getByText(/asked-for@example\.com asked to join/).waitFor({ timeout: 15_000 }), 'the request shows without a reload')
    await axe(t, page, 'Invite requests (admin)')
    const seen = smtp.messages.length
    await page.getByRole('combobox', { name: 'Role for asked-for@example.com' }).selectOption('admin')
    await page.getByRole('button', { name: 'Approve asked-for@example.com' }).click()
    await page.locator('#live', { hasText: 'asked-for@example.com was approved as admin and invited' }).waitFor()
    t.match((await smtp.nextMessage(seen)).text, /\/signup\?token=/, 'the invitation was e-mailed')
  })

  await t.test('activity: each of these, through the web door', async t => {
    await open(page, 'Activity')
    const doorOf = async (action: string): Promise<string[]> => {
      await page.getByLabel('What').selectOption(action)
      await page.getByRole('button', { name: 'Filter' }).click()
      const rows = page.locator('tbody tr', { has: page.locator('code', { hasText: action }) })
      await rows.first().waitFor()
      return await rows.locator('td.door').allTextContents()
    }
    for (const action of [
      'invitation.created', 'invitation.resent', 'invitation.revoked', 'member.role_changed', 'api_key.created',
      'webhook_endpoint.created', 'webhook_endpoint.tested', 'workspace.settings_changed', 'invite_request.approved',
      'chat.installed', 'chat.uninstalled'
    ]) {
      const doors = await doorOf(action)
      t.ok(doors.length > 0 && doors.every(d => d === 'web'), `${action}: door web (${doors.join(', ')})`)
    }
    t.same(await doorOf('invite_request.created'), ['chat'], 'the request itself came through the chat door')
    t.same(await doorOf('invitation.accepted'), ['web'], 'the invitee signed up in the browser')
    await page.getByLabel('What').selectOption('')
    await page.getByLabel('Who (e-mail)').fill('Grace@example.com')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.locator('tbody tr', { hasText: 'invite_request.created' }).waitFor()
    t.same(await page.locator('tbody tr td.door').allTextContents(), ['chat'], 'what one person did: Grace asked, in chat')
    await page.getByLabel('Who (e-mail)').fill('')
    await page.getByRole('button', { name: 'Filter' }).click()
    await axe(t, page, 'Activity (admin)')
  })

  await t.test('the API reference loads nothing from another host', async t => {
    const docs = await context.newPage()
    const docsProblems = pageProblems(docs)
    const requested: string[] = []
    docs.on('request', r => { requested.push(r.url()) })
    await docs.goto(`${base}/api/docs`)
    await docs.getByText('Liveness and database check').first().waitFor()
    // What the page loads after drawing (fonts, icons): asked for once the network has gone quiet.
    await docs.waitForLoadState('networkidle')
    t.same(requested.filter(u => !u.startsWith(`${base}/`) && !u.startsWith('data:')), [], `no outside request (${requested.length} requests)`)
    t.same(docsProblems, [], 'no script errors, no CSP violations')
    await docs.close()
  })

  await t.test('a member asks for invitations or invites as the policy allows, sees their requests, signs out', async t => {
    const setPolicy = async (invitePolicy: 'admins' | 'request' | 'members') => {
      const res = await h.inject({ method: 'PATCH', url: '/api/workspace/settings', headers: { cookie: admin.cookie }, payload: { invitePolicy } })
      t.equal(res.statusCode, 200, `the invite policy is now ${invitePolicy}`)
    }
    const other = await browser.newContext({ viewport: { width: 360, height: 800 } })
    await withCookie(other, base, member.cookie)
    const p = await other.newPage()
    p.setDefaultTimeout(20_000)
    const memberProblems = pageProblems(p)
    await p.goto(`${base}/`)
    await p.locator('#me-role', { hasText: 'member' }).waitFor()
    t.same(await p.getByRole('navigation', { name: 'Console' }).getByRole('link').allTextContents(), ['Profile'])

    // "request" (set in Settings above): the request form, three pasted addresses, three results.
    await p.locator('#member-may', { hasText: 'members ask for invitations' }).waitFor()
    // Grace asked in Slack earlier (the requests test), and an admin approved it: listed as hers.
    await p.getByRole('row', { name: /asked-for@example\.com/ }).locator('td.status', { hasText: 'approved: invited' }).waitFor()
    await p.fill('#ask-emails', 'friend@example.com not-an-address\nnewbie@example.com')
    await p.getByRole('button', { name: 'Ask the admins' }).click()
    const results = p.locator('.results li')
    await results.nth(2).waitFor()
    t.same(
      await results.evaluateAll(els => els.map(e => [e.querySelector('strong')?.textContent, e.getAttribute('data-outcome')])),
      [['friend@example.com', 'asked'], ['not-an-address', 'invalid'], ['newbie@example.com', 'member']],
      'one result per address: asked for, invalid, already a member'
    )
    t.match(await liveText(p, /1 of 3 asked for/), /1 of 3 asked for/, 'and the live region says so')
    const mine = p.getByRole('row', { name: /friend@example\.com/ })
    await mine.waitFor()
    t.match(await mine.locator('td.status').textContent(), /waiting for an admin/, 'My requests lists it, pending')
    await axe(t, p, 'Profile (member, asking for invitations, 360 px)')

    // The admin's open Requests screen shows it without a reload (the events feed), and denies it.
    await open(page, 'Invite requests')
    await t.resolves(page.getByText(/friend@example\.com asked to join/).waitFor({ timeout: 15_000 }), 'the request shows on the admin\'s screen without a reload')
    await page.getByLabel('Reason to deny (optional)').fill('Ask again next quarter')
    await page.getByRole('button', { name: 'Deny friend@example.com' }).click()
    await page.locator('#live', { hasText: 'The request for friend@example.com was denied' }).waitFor()
    await p.getByRole('button', { name: 'Refresh my requests' }).click()
    await p.getByRole('row', { name: /friend@example\.com/ }).locator('td.status', { hasText: 'denied · Ask again next quarter' }).waitFor()
    t.pass('the member sees the denial and its reason')

    // "members": the invite form, members only (no role to choose).
    await setPolicy('members')
    await p.reload()
    await p.locator('#member-may', { hasText: 'members may invite members' }).waitFor()
    t.equal(await p.locator('#invite-role').count(), 0, 'no role to choose: members invite members')
    const seen = smtp.messages.length
    await p.fill('#invite-emails', 'colleague@example.com')
    await p.getByRole('button', { name: 'Send invitations' }).click()
    await p.locator('.results li[data-outcome=invited]', { hasText: 'colleague@example.com' }).waitFor()
    t.match((await smtp.nextMessage(seen)).to, ['colleague@example.com'], 'the invitation was e-mailed')
    await axe(t, p, 'Profile (member, inviting, 360 px)')

    // "admins": neither form, the sentence says whom to ask; the member's requests stay listed.
    await setPolicy('admins')
    await p.reload()
    await p.locator('#member-may', { hasText: 'only admins invite people: ask an admin' }).waitFor()
    t.equal(await p.locator('form').count(), 0, 'no invite or request form')
    await p.getByRole('row', { name: /friend@example\.com/ }).waitFor()
    await axe(t, p, 'Profile (member, only admins invite, 360 px)')

    await p.goto(`${base}/console/members`)
    await p.getByRole('alert').filter({ hasText: 'Members is for admins' }).waitFor()
    await axe(t, p, 'Members opened by a member (360 px)')
    await p.click('#logout')
    await p.locator('#signed-out').waitFor()
    await axe(t, p, 'Signed out')
    t.same(memberProblems, [])
    await other.close()
  })

  await t.test('the invite form over the e-mail budget: when to retry, from Retry-After', async t => {
    // A workspace of its own, its hourly budget (INVITE_EMAILS_PER_HOUR=10) spent but for two.
    const boss = await h.signIn({ role: 'admin', workspaceName: 'Budget Ltd', email: 'boss@budget.example' })
    for (let i = 0; i < 8; i++) {
      await h.app.services.invitations.invite(principalOf(boss, 'admin'), { email: `spent-${i}@budget.example`, role: 'member' })
    }
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    await withCookie(ctx, base, boss.cookie)
    const b = await ctx.newPage()
    b.setDefaultTimeout(20_000)
    const budgetProblems = pageProblems(b)
    await b.goto(`${base}/console/invitations`)
    await b.fill('#invite-emails', 'last-1@budget.example, last-2@budget.example, over-1@budget.example over-2@budget.example')
    await b.getByRole('button', { name: 'Send invitations' }).click()
    const results = b.locator('.results li')
    await results.nth(3).waitFor()
    t.same(
      await results.evaluateAll(els => els.map(e => e.getAttribute('data-outcome'))),
      ['invited', 'invited', 'budget', 'budget'],
      'two within the budget, two over it'
    )
    t.match(await results.nth(2).textContent(), /^Row 3 over-1@budget\.example: over the e-mail budget: try again in (59|60) minutes \(at \d/,
      'when to retry, from Retry-After (the hour\'s window)')
    t.match(await liveText(b, /2 of 4 invited/), /2 of 4 invited/)
    await axe(t, b, 'Invitations (admin, over the e-mail budget)')
    t.same(budgetProblems, [])
    await ctx.close()
  })

  t.same(problems, [], 'no script errors and no CSP violations')
  t.comment(`axe checked: ${checked.join(', ')}`)
})
