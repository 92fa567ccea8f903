import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build, seededDataDir } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { startSmtp } from '../helpers/smtp.js'
import { openDatabase } from '../../src/db/client.js'
import { projectRoot } from '../../src/paths.js'
import { hashToken } from '../../src/lib/tokens.js'
import { tsImport } from '../helpers/service-process.js'

// npm run create-admin, run as the operator runs it: a child process with its own environment and
// the embedded database in a temporary DATA_DIR.

interface Run { code: number | null, stdout: string, stderr: string }

async function createAdmin (args: string[], env: Record<string, string>): Promise<Run> {
  // Only what the script needs from this environment: no DATABASE_URL or SMTP_URL leaks in.
  const base: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    LOG_LEVEL: 'silent'
  }
  return await new Promise(resolve => {
    execFile(process.execPath, [
      ...tsImport, 'scripts/create-admin.ts', ...args
    ], { cwd: projectRoot, env: { ...base, ...env }, timeout: 90_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : (typeof err.code === 'number' ? err.code : null), stdout, stderr })
    })
  })
}

const lastLine = (s: string): string => s.trimEnd().split('\n').at(-1) ?? ''

t.test('bad arguments: a clear message, usage, exit 1, nothing created', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'create-admin-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const cases: Array<[string[], RegExp]> = [
    [[], /--email is required/],
    [['--email', 'boss@example.com'], /--workspace is required/],
    [['--email', 'not-an-address', '--workspace', 'Acme'], /--email must be an e-mail address/],
    // The one rule of every entry point (src/lib/email.ts): no surrounding spaces, no commas, ASCII.
    [['--email', ' boss@example.com', '--workspace', 'Acme'], /--email must be an e-mail address/],
    [['--email', 'a,b@example.com', '--workspace', 'Acme'], /--email must be an e-mail address/],
    [['--email', 'boss@example.com', '--workspace', 'Acme', '--force'], /Unknown option '--force'/]
  ]
  for (const [args, message] of cases) {
    const r = await createAdmin(args, { DATA_DIR: dir })
    t.equal(r.code, 1, args.join(' ') || '(no arguments)')
    t.match(r.stderr, message)
    t.match(r.stderr, /usage: npm run create-admin -- --email <address> --workspace <name>/)
    t.equal(r.stdout, '')
  }
})

t.test('creates the workspace and an admin invitation; e-mails it; the last line is the signup link', async t => {
  const dir = await seededDataDir(t, 'create-admin-')
  const smtp = await startSmtp(t)
  const env = { DATA_DIR: dir, APP_URL: 'https://app.example.test', SMTP_URL: smtp.url }

  const r = await createAdmin(['--email', 'Boss@Example.com', '--workspace', 'Acme Rockets'], env)
  t.equal(r.code, 0, r.stderr)
  const link = lastLine(r.stdout)
  t.match(link, /^https:\/\/app\.example\.test\/signup\?token=[A-Za-z0-9_-]{43}$/, 'last line is the signup link')
  t.match(r.stdout, /Created workspace "Acme Rockets"/)
  t.match(r.stdout, /E-mailed to boss@example\.com/)
  const mail = await smtp.nextMessage(0)
  t.same(mail.to, ['boss@example.com'])
  t.ok(mail.text.includes(link) && mail.html.includes(link), 'the same invitation e-mail, with the link')
  t.match(mail.text, /Acme Rockets/)
  t.match(mail.text, /as an admin/)

  // Run again: the same invitation re-issued (new link, old one dead), no second workspace.
  const again = await createAdmin(
    ['--email', 'boss@example.com', '--workspace', 'Acme Rockets'],
    { DATA_DIR: dir, APP_URL: 'https://app.example.test' }
  )
  t.equal(again.code, 0, again.stderr)
  t.match(again.stdout, /re-issued/)
  t.match(again.stdout, /Not e-mailed \(SMTP_URL is not set\)/)
  const link2 = lastLine(again.stdout)
  t.not(link2, link)

  // The service, on the same data directory, previews and accepts the printed link.
  const db = await openDatabase({ url: null, dataDir: dir })
  const h = await build(t, { db })
  const token = new URL(link2).searchParams.get('token') ?? ''
  const rows = await db.query<{ token_hash: string, role: string, invited_by: string | null, workspace_id: string }>(
    'SELECT token_hash, role, invited_by, workspace_id FROM invitations'
  )
  t.equal(rows.rows.length, 1, 'one invitation')
  t.match(rows.rows[0], { token_hash: hashToken(token), role: 'admin', invited_by: null })
  const ws = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM workspaces')
  t.equal(ws.rows[0]?.n, 1, 'one workspace')

  // While this process holds DATA_DIR (as a running service would), the script refuses clearly.
  const locked = await createAdmin(['--email', 'other@example.com', '--workspace', 'Acme'], { DATA_DIR: dir })
  t.equal(locked.code, 1, 'database in use: exit 1')
  t.match(
    locked.stderr,
    `create-admin: The embedded database in ${join(dir, 'pglite')} is in use by a running process (pid ${process.pid}). Stop it, or set DATABASE_URL`
  )
  t.equal(locked.stdout, '', 'no link printed')

  const old = await h.inject({
    method: 'POST',
    url: '/api/auth/invitation',
    payload: { token: new URL(link).searchParams.get('token') ?? '' }
  })
  t.equal(old.statusCode, 400, 'the first link no longer works')
  const preview = await h.inject({ method: 'POST', url: '/api/auth/invitation', payload: { token } })
  t.equal(preview.statusCode, 200)
  assertContract(t, 'POST', '/api/auth/invitation', preview)
  t.match(
    preview.json(), { email: 'boss@example.com', role: 'admin', workspace: { name: 'Acme Rockets' }, invitedBy: null }
  )
  const signup = await h.inject({ method: 'POST', url: '/api/auth/signup', payload: { token, name: 'The Boss' } })
  t.equal(signup.statusCode, 201, 'the first admin signs up')
  t.match(signup.json(), { user: { email: 'boss@example.com', role: 'admin' } })
  const audit = await db.query<{ action: string, actor_type: string, actor_label: string }>(
    'SELECT action, actor_type, actor_label FROM audit_events ORDER BY id'
  )
  t.match(
    audit.rows.slice(0, 2),
    [
      { action: 'invitation.created', actor_type: 'system', actor_label: 'create-admin' },
      { action: 'invitation.resent', actor_type: 'system' }
    ]
  )
  await h.app.close()
  await db.close()

  // Now a user: a clear refusal.
  const exists = await createAdmin(['--email', 'boss@example.com', '--workspace', 'Other'], { DATA_DIR: dir })
  t.equal(exists.code, 1)
  t.match(exists.stderr, /a user with the e-mail boss@example\.com already exists/)
})
