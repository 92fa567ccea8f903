import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { SESSION_COOKIE } from '../../src/sessions/service.js'
import { insertWorkspace } from '../../src/db/workspaces.js'
import { insertUser } from '../../src/db/users.js'

// A workspace with something of every kind an operator would miss after a restore: members (an
// admin and two), pending invitations, an API key and a webhook endpoint. Made and read through
// the service's own operations (inject), so a backup that loses any of it, or breaks the key's
// hash or the endpoint's sealed secret, fails the reading. Used by test/ops/backup-restore.test.ts
// and to make the upgrade fixture (test/fixtures/upgrade/).

export interface WorkspaceContent {
  workspaceId: string
  adminUserId: string
  /** A session token of the admin, made before the backup (the secret goes with the data). */
  adminSession: string
  members: string[]
  invitations: string[]
  apiKey: { id: string, name: string, secret: string }
  webhook: { id: string, url: string }
}

/** Makes the content in a new workspace, on an app as buildApp returns it. */
export async function makeWorkspaceContent (app: FastifyInstance, name = 'Backed up'): Promise<WorkspaceContent> {
  const db = app.db
  const now = new Date()
  const ws = await insertWorkspace(db, { name, now })
  const admin = await insertUser(db, { workspaceId: ws.id, email: 'admin@backup.example', name: 'Ada', role: 'admin', now })
  const members = ['admin@backup.example']
  for (const email of ['grace@backup.example', 'alan@backup.example']) {
    await insertUser(db, { workspaceId: ws.id, email, name: null, role: 'member', now })
    members.push(email)
  }
  const { token } = await app.services.sessions.start(db, admin.id, 'signup')
  const post = async (url: string, payload: Record<string, unknown>) => {
    const res = await app.inject({
      method: 'POST', url, headers: { cookie: `${SESSION_COOKIE}=${token}`, 'content-type': 'application/json' }, payload
    })
    if (res.statusCode >= 300) throw new Error(`POST ${url}: ${res.statusCode} ${res.body}`)
    return res.json()
  }
  const invitations = ['invited-1@backup.example', 'invited-2@backup.example']
  for (const email of invitations) await post('/api/users/invite', { email, role: 'member' })
  const key = await post('/api/api-keys', { name: 'backup script', scopes: ['workspace:read'] })
  const hook = await post('/api/webhook-endpoints', { url: 'http://127.0.0.1:9/backup-hook' })
  return {
    workspaceId: ws.id,
    adminUserId: admin.id,
    adminSession: token,
    members,
    invitations,
    apiKey: { id: key.id, name: 'backup script', secret: key.secret },
    webhook: { id: hook.id, url: hook.url }
  }
}

/** Reads the content back through the service: what a restored installation must serve. */
export async function assertWorkspaceServed (t: Test, app: FastifyInstance, c: WorkspaceContent): Promise<void> {
  const { token } = await app.services.sessions.start(app.db, c.adminUserId, 'signup')
  const get = async (url: string, auth: Record<string, string> = { cookie: `${SESSION_COOKIE}=${token}` }) => {
    const res = await app.inject({ method: 'GET', url, headers: auth })
    t.equal(res.statusCode, 200, `GET ${url}`)
    return res.json()
  }
  const users = await get('/api/users') as { items: Array<{ email: string }> }
  t.same(users.items.map(u => u.email).sort(), [...c.members].sort(), 'the members')
  const invitations = await get('/api/invitations?status=pending') as { items: Array<{ email: string }> }
  t.same(invitations.items.map(i => i.email).sort(), [...c.invitations].sort(), 'the pending invitations')
  const keys = await get('/api/api-keys') as { items: Array<{ id: string, name: string }> }
  t.same(keys.items.map(k => [k.id, k.name]), [[c.apiKey.id, c.apiKey.name]], 'the API key')
  const hooks = await get('/api/webhook-endpoints') as { items: Array<{ id: string, url: string }> }
  t.same(hooks.items.map(h => [h.id, h.url]), [[c.webhook.id, c.webhook.url]], 'the webhook endpoint')
  const ws = await get('/api/workspace', { authorization: `Bearer ${c.apiKey.secret}` }) as { id: string }
  t.equal(ws.id, c.workspaceId, 'the API key still authenticates')
  const me = await get('/api/users/me', { cookie: `${SESSION_COOKIE}=${c.adminSession}` }) as { user: { id: string } }
  t.equal(me.user.id, c.adminUserId, 'a session made before is still valid (the secret came along)')
}
