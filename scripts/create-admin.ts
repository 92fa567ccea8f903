// The first admin: creates a workspace and an admin invitation, e-mails it when SMTP_URL is set,
// and prints the signup link as the last line of its output.
//
//   npm run create-admin -- --email admin@example.com --workspace "Acme"
//
// Configuration as the service loads it (DATABASE_URL, or the embedded database in DATA_DIR;
// APP_URL for the link). Exit 0 with the link; 1 with one line saying why otherwise.
import { parseArgs } from 'node:util'
import type { Database } from '../src/db/client.js'
import type { Mailer } from '../src/ports/mailer.js'
import type { Logger } from '../src/logger.js'
import { validateFirstAdminInput } from '../src/invitations/validate.js'

const USAGE = 'usage: npm run create-admin -- --email <address> --workspace <name>'

function fail (message: string, usage = false): never {
  process.stderr.write(`create-admin: ${message}\n${usage ? USAGE + '\n' : ''}`)
  process.exit(1)
}

// Arguments first: a typo costs no database start.
let email: string
let workspace: string
try {
  const { values } = parseArgs({
    options: { email: { type: 'string' }, workspace: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
    allowPositionals: false
  })
  if (values.help === true) {
    process.stdout.write(USAGE + '\n')
    process.exit(0)
  }
  if (values.email === undefined) fail('--email is required', true)
  if (values.workspace === undefined) fail('--workspace is required', true)
  email = values.email
  workspace = values.workspace
} catch (err) {
  fail((err as Error).message, true)
}
const problem = validateFirstAdminInput({ email, workspaceName: workspace })
if (problem !== null) fail(problem, true)

// Warnings and the mailer's notes go to stderr, so stdout ends with the link.
const write = (level: string) => (a: unknown, b?: unknown) => {
  const msg = typeof a === 'string' ? a : (typeof b === 'string' ? b : '')
  const err = typeof a === 'object' && a !== null && 'err' in a ? ` (${String((a as { err: unknown }).err)})` : ''
  process.stderr.write(`${level}: ${msg}${err}\n`)
}
const log = {
  level: 'warn',
  fatal: write('fatal'),
  error: write('error'),
  warn: write('warn'),
  info: () => {},
  debug: () => {},
  trace: () => {},
  silent: () => {},
  child: () => log
} as unknown as Logger

// Loaded only now: the database and mail modules are heavy, and bad arguments need neither.
const [
  { ConfigError, loadConfig },
  { openDatabase },
  { migrate },
  { createMailer },
  { systemClock },
  { projectRoot },
  { isServiceError },
  { createFirstAdmin },
  { startJobEngine },
  { createEventOutbox }
] = await Promise.all([
  import('../src/config.js'), import(
    '../src/db/client.js'
  ), import('../src/db/migrate.js'), import('../src/mail/mailer.js'),
  import('../src/clock.js'), import('../src/paths.js'), import('../src/errors.js'), import(
    '../src/invitations/first-admin.js'
  ), import('../src/jobs/engine.js'), import('../src/events/outbox.js')
])

let db: Database | undefined
let mailer: Mailer | null = null
let code = 0
try {
  const config = loadConfig(process.env, { root: projectRoot })
  db = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir })
  await migrate(db)
  mailer = config.smtp.url !== null
    ? createMailer({
      smtpUrl: config.smtp.url,
      from: config.smtp.from,
      timeoutMs: config.smtp.timeoutMs,
      poolConnections: config.smtp.poolConnections,
      dataDir: config.dataDir,
      log
    })
    : null
  // Its events are queued like the service's (a re-issue in a workspace with webhook endpoints
  // delivers them); this process runs no workers, the service does.
  const jobs = await startJobEngine({
    db, log, schema: config.jobs.schema, pollSeconds: 1, expireSeconds: 60, maintenanceSeconds: 60, workers: false
  })
  const events = createEventOutbox(jobs)
  const r = await createFirstAdmin(
    { db, clock: systemClock, config, log, mailer, events }, { email, workspaceName: workspace }
  ).finally(async () => { await jobs.stop() })
  const out = process.stdout
  out.write(r.reissued
    ? `Workspace "${r.workspaceName}" (${r.workspaceId}) already had a pending admin invitation for ${r.email}: ` +
      're-issued with a new link (the old one no longer works).\n'
    : `Created workspace "${r.workspaceName}" (${r.workspaceId}) and an admin invitation for ${r.email}.\n`)
  out.write(`The invitation expires at ${r.expiresAt.toISOString()}.\n`)
  if (r.delivery === 'sent') out.write(`E-mailed to ${r.email}.\n`)
  if (r.delivery === 'skipped') out.write('Not e-mailed (SMTP_URL is not set): open or share this link.\n')
  if (r.delivery === 'failed') {
    process.stderr.write('create-admin: the invitation e-mail could not be sent; the link below works all the same.\n')
    out.write('Not e-mailed (sending failed): open or share this link.\n')
  }
  out.write(`${r.link}\n`)
} catch (err) {
  code = 1
  const e = err as Error
  if (e instanceof ConfigError) {
    process.stderr.write(`create-admin: ${e.message}\n`)
  } else if (e.name === 'DatabaseLockedError') {
    // Names the directory and the pid holding it.
    process.stderr.write(`create-admin: ${e.message}\n`)
  } else if (isServiceError(e) && e.code === 'USER_EXISTS') {
    process.stderr.write(`create-admin: a user with the e-mail ${email.trim().toLowerCase()} already exists.\n`)
  } else if (isServiceError(e) && e.statusCode < 500) {
    process.stderr.write(`create-admin: ${e.message}\n`)
  } else {
    process.stderr.write(`create-admin failed: ${e.message}\n`)
  }
} finally {
  await mailer?.close()
  await db?.close()
}
process.exit(code)
