import t from 'tap'
import { openDatabase } from '../../src/db/client.js'
import { loadMigrations, migrate } from '../../src/db/migrate.js'
import { build } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'

// A public suffix is nobody's domain to prove: under `co.uk` or `github.io` (the Public Suffix
// List's private section) each name has another owner. The API refuses them, from a maintained
// PSL package (tldts); the migration sets those already added to failed, with the reason.

t.test('public suffixes are refused as domains, the list\'s private section included', async t => {
  const h = await build(t)
  const admin = await h.signIn({ role: 'admin' })
  const add = async (domain: string) => {
    const res = await h.inject({
      method: 'POST', url: '/api/domains', headers: { cookie: admin.cookie, 'content-type': 'application/json' }, payload: { domain }
    })
    assertContract(t, 'POST', '/api/domains', res)
    return res
  }
  for (const domain of ['co.uk', 'github.io', 'GitHub.IO', 'blogspot.com', 's3.amazonaws.com', 'gov.uk', 'foo.ck']) {
    const res = await add(domain)
    t.equal(res.statusCode, 400, domain)
    t.match(res.json(), { code: 'DOMAIN_NOT_ALLOWED', message: /is a public suffix/ }, `${domain}: refused, and why`)
  }
  for (const domain of ['acme.co.uk', 'acme-robotics.github.io', 'www.ck']) {
    t.equal((await add(domain)).statusCode, 201, `${domain}: a name under a suffix is someone's`)
  }
})

t.test('the migration fails public suffixes already added, with the reason', async t => {
  const db = await openDatabase({ url: null, dataDir: null })
  t.teardown(async () => { await db.close() })
  const all = loadMigrations()
  const psl = all.find(m => m.name.includes('public_suffix'))
  t.ok(psl, 'the migration exists')
  await migrate(db, { migrations: all.filter(m => m.version < (psl?.version ?? 0)) })
  const ws = async (name: string): Promise<string> => (await db.query<{ id: string }>(
    'INSERT INTO workspaces (name, created_at) VALUES ($1, now()) RETURNING id', [name])).rows[0]?.id ?? ''
  const [w1, w2] = [await ws('one'), await ws('two')]
  const domain = async (workspaceId: string, name: string, status: string) => {
    await db.query(
      `INSERT INTO workspace_domains (workspace_id, domain, status, token, verified_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, CASE WHEN $3 = 'verified' THEN now() END, now(), now())`,
      [workspaceId, name, status, 'x'.repeat(43)])
  }
  await domain(w1, 'github.io', 'verified')
  await domain(w2, 'co.uk', 'verified')
  await domain(w1, 'blogspot.com', 'pending')
  await domain(w1, 'acme.co.uk', 'verified')
  await domain(w2, 'acme-robotics.github.io', 'pending')

  await migrate(db, { migrations: all })
  const rows = (await db.query<{ domain: string, status: string, check_error: string | null, failed_at: Date | null }>(
    'SELECT domain, status, check_error, failed_at FROM workspace_domains ORDER BY domain')).rows
  const by = new Map(rows.map(r => [r.domain, r]))
  for (const name of ['github.io', 'co.uk', 'blogspot.com']) {
    t.match(by.get(name), { status: 'failed', check_error: /is a public suffix/, failed_at: Date }, `${name}: failed, with the reason`)
  }
  t.match(by.get('acme.co.uk'), { status: 'verified', check_error: null }, 'a name under a suffix stays verified')
  t.match(by.get('acme-robotics.github.io'), { status: 'pending', check_error: null }, 'and pending')
})
