import t from 'tap'
import { uuidV7Source } from '../../src/lib/uuid.js'
import { build } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { checkPage, launchChromium, pageProblems, skipWithoutChromium as skip } from '../helpers/browser.js'

// Contract 2.0's open catalogues as a client meets them: an audit action, a door and an event
// type this version does not list (what a newer instance of the service would have written) are
// answered by the API within its schema and shown by the console by their own names, never
// dropped or left blank. Written straight into the database: no operation of this version makes them.

const ACTION = 'sso.connection_created'
const DOOR = 'sso'

t.test('values a newer service wrote: the API answers them, the console shows them by name', { timeout: 240_000 }, async t => {
  const h = await build(t)
  const admin = await h.signIn({ role: 'admin', workspaceName: 'Acme Robotics', email: 'ada@example.com' })
  const headers = { cookie: admin.cookie }
  // This version's schema lists its doors; a newer one's migration would have added the new door.
  await h.db.query('ALTER TABLE audit_events DROP CONSTRAINT audit_events_source_check')
  await h.db.query(
    `INSERT INTO audit_events (id, workspace_id, action, actor_type, actor_id, actor_label, target_type, target_id,
                               payload, created_at, event_type, source)
     VALUES ($1, $2, $3, 'system', NULL, 'okta.acme.example', NULL, NULL, '{}'::jsonb, $4, $3, $5)`,
    [uuidV7Source()(h.clock.now()), admin.workspaceId, ACTION, h.clock.now(), DOOR])
  const hook = await h.inject({
    method: 'POST', url: '/api/webhook-endpoints', headers, payload: { url: 'https://hooks.example.com/in', eventTypes: ['member.joined'] }
  })
  t.equal(hook.statusCode, 201, hook.body)
  await h.db.query('UPDATE webhook_endpoints SET event_types = event_types || $2::text[] WHERE id = $1', [hook.json().id, [ACTION]])

  const trail = await h.inject({ url: '/api/audit-events?limit=5', headers })
  assertContract(t, 'GET', '/api/audit-events', trail)
  const row = (trail.json().items as Array<{ action: string, source: string }>).find(e => e.action === ACTION)
  t.same(row && { action: row.action, source: row.source }, { action: ACTION, source: DOOR }, 'the audit trail answers them as written')
  const feed = await h.inject({ url: '/api/events', headers })
  assertContract(t, 'GET', '/api/events', feed)
  t.ok((feed.json().items as Array<{ type: string }>).some(e => e.type === ACTION), 'so does the event feed')
  const hooks = await h.inject({ url: '/api/webhook-endpoints', headers })
  assertContract(t, 'GET', '/api/webhook-endpoints', hooks)
  t.same(hooks.json().items[0].eventTypes, ['member.joined', ACTION], 'and an endpoint\'s subscriptions')
  // Inputs stay closed: an endpoint cannot be subscribed to an event this version does not list.
  const refused = await h.inject({
    method: 'PATCH', url: `/api/webhook-endpoints/${String(hook.json().id)}`, headers, payload: { eventTypes: [ACTION] }
  })
  t.equal(refused.statusCode, 400, 'a subscription to an unknown event is refused')

  if (skip !== false) { t.comment(skip); return }
  const port = (await h.app.listen({ port: 0, host: '127.0.0.1' })).split(':').pop()
  const base = `http://127.0.0.1:${String(port)}`
  const browser = await launchChromium(t)
  for (const width of [1280, 360]) {
    await t.test(`the console at ${width} px`, async t => {
      const context = await browser.newContext({ viewport: { width, height: 900 } })
      const [name, value] = admin.cookie.split('=') as [string, string]
      await context.addCookies([{ name, value, url: base, httpOnly: true, sameSite: 'Lax' }])
      await context.route(url => !url.href.startsWith(base), route => route.abort())
      const page = await context.newPage()
      page.setDefaultTimeout(20_000)
      const problems = pageProblems(page)
      await page.goto(`${base}/console/activity`)
      const entry = page.getByRole('row', { name: new RegExp(ACTION.replace('.', '\\.')) })
      await entry.waitFor()
      t.equal(await entry.locator('td.door').textContent(), DOOR, 'Activity: the door by its name')
      t.match(await entry.locator('code').textContent(), ACTION, 'Activity: the action by its name')
      await checkPage(t, page, `Activity (an action this console does not know, ${width})`)
      await page.goto(`${base}/console/webhooks`)
      const subscribed = page.getByText(`Events: member.joined, ${ACTION}`)
      await subscribed.waitFor()
      await page.getByRole('button', { name: 'Edit https://hooks.example.com/in' }).click()
      await page.getByText(`Also subscribed to ${ACTION}, which this console does not list`).waitFor()
      const card = page.getByRole('listitem').filter({ hasText: 'https://hooks.example.com/in' })
      t.equal(await card.getByRole('checkbox', { name: 'member.joined' }).isChecked(), true, 'the known subscription is picked')
      await checkPage(t, page, `Webhooks (a subscription this console does not know, ${width})`)
      t.same(problems, [], 'no script error')
      await context.close()
    })
  }
})
