import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createServer, type Server } from 'node:net'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { projectRoot } from '../../src/paths.js'
import { seededDataDir } from '../helpers/build.js'
import { tsImport } from '../helpers/service-process.js'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { StartupError } from '../../src/config/error.js'

// A setting that is well-formed but does not work — a database nobody answers for, a database that
// does not exist, a port another process holds, a directory that cannot be written — stops the
// service as a bad value does: one line on standard error that names the setting and says what to
// do, a non-zero exit, within seconds. No stack trace, no hang.

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? null
// Importing the app takes seconds on a loaded machine; the bound is generous, the point is "not for ever".
const BOUND_MS = 60_000
t.setTimeout(6 * BOUND_MS)

const dir = mkdtempSync(join(tmpdir(), 'ws-startup-'))
t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
// The services that get as far as their database open this one, made and migrated already.
const data = await seededDataDir(t, 'ws-startup-data-')

interface Outcome { code: number | null, signal: string | null, stderr: string, stdout: string, ms: number }

async function start (env: Record<string, string>): Promise<Outcome> {
  const { DATABASE_URL: _db, REDIS_URL: _redis, NODE_OPTIONS: _loaders, ...base } = process.env
  const begun = Date.now()
  const child = spawn(process.execPath, [...tsImport, 'src/server.ts'], {
    cwd: projectRoot,
    env: { ...base, PORT: '0', METRICS_PORT: '', LOG_LEVEL: 'warn', LOG_FORMAT: 'json', DATA_DIR: data, ...env }
  })
  let stderr = ''
  let stdout = ''
  child.stderr.setEncoding('utf8').on('data', (s: string) => { stderr += s })
  child.stdout.setEncoding('utf8').on('data', (s: string) => { stdout += s })
  const timer = setTimeout(() => { child.kill('SIGKILL') }, BOUND_MS)
  const [code, signal] = await new Promise<[number | null, string | null]>(resolve => {
    child.on('exit', (c, s) => { resolve([c, s]) })
  })
  clearTimeout(timer)
  return { code, signal, stderr, stdout, ms: Date.now() - begun }
}

function assertOneLine (t: Test, o: Outcome, setting: string, says: RegExp): void {
  t.equal(o.signal, null, `it exited by itself within ${BOUND_MS} ms (${o.ms} ms), not killed`)
  t.equal(o.code, 1, 'exit code 1')
  const lines = o.stderr.trim().split('\n')
  t.equal(lines.length, 1, `one line on standard error: ${o.stderr}`)
  t.match(lines[0], new RegExp(`^Start-up failed: ${setting}: `), `it names ${setting}`)
  t.match(lines[0], says)
  t.notMatch(o.stderr, /\n\s+at /, 'no stack trace')
}

async function listening (): Promise<{ server: Server, port: number }> {
  const server = createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  return { server, port: typeof address === 'object' && address !== null ? address.port : 0 }
}

async function closedPort (): Promise<number> {
  const { server, port } = await listening()
  await new Promise(resolve => server.close(resolve))
  return port
}

t.test('a database nobody answers for names DATABASE_URL (and not its password)', async t => {
  const port = await closedPort()
  const o = await start({ DATABASE_URL: `postgres://app:s3cret-pw@127.0.0.1:${port}/ws`, SESSION_SECRET: 'x'.repeat(32) })
  assertOneLine(t, o, 'DATABASE_URL', new RegExp(`127\\.0\\.0\\.1:${port} \\(connection refused\\); start PostgreSQL there`))
  t.notMatch(o.stderr + o.stdout, /s3cret-pw/, 'the password is not printed')
})

/**
 * A PostgreSQL server as far as its first answer: it reads the startup message (after refusing
 * SSL) and then, as the real one does, asks for the password and refuses it (28P01), refuses the
 * role (28000), says the database does not exist (3D000), or never answers.
 */
async function fakePostgres (
  t: Test, answer: 'password' | 'asks-password' | 'role' | 'database' | 'silent'
): Promise<number> {
  const error = (code: string, message: string): Buffer => {
    const fields = Buffer.concat([
      ...[['S', 'FATAL'], ['V', 'FATAL'], ['C', code], ['M', message]].map(([k, v]) => Buffer.from(`${k ?? ''}${v ?? ''}\0`)),
      Buffer.from([0])
    ])
    const head = Buffer.alloc(5)
    head.write('E')
    head.writeInt32BE(fields.length + 4, 1)
    return Buffer.concat([head, fields])
  }
  const askPassword = Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 3]) // AuthenticationCleartextPassword
  const server = createServer(socket => {
    socket.on('error', () => {})
    let buffered = Buffer.alloc(0)
    let started = false
    socket.on('data', chunk => {
      buffered = Buffer.concat([buffered, chunk])
      if (!started) {
        if (buffered.length < 8) return
        const length = buffered.readInt32BE(0)
        if (buffered.length < length) return
        const request = buffered.readInt32BE(4)
        buffered = buffered.subarray(length)
        if (request === 80877103) { socket.write('N'); return } // SSLRequest: no
        started = true
        if (answer === 'silent') return
        if (answer === 'role') socket.end(error('28000', 'role "app" does not exist'))
        else if (answer === 'database') socket.end(error('3D000', 'database "ws_gone" does not exist'))
        else socket.write(askPassword)
        return
      }
      // The password message ('p'): refused.
      if (buffered[0] === 0x70) socket.end(error('28P01', 'password authentication failed for user "app"'))
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.close() })
  return (server.address() as { port: number }).port
}

// Each cause says itself and what to change: "start PostgreSQL there" only when nothing listens.
const PG_FAULTS = [
  {
    what: 'a wrong password: credentials refused, correct the password',
    answer: 'password',
    url: (port: number) => `postgres://app:wrong-pw-123@127.0.0.1:${port}/ws`,
    says: /PostgreSQL at 127\.0\.0\.1:\d+ refused the password of user app \(credentials refused\); correct the password in DATABASE_URL/
  },
  {
    what: 'no password in the URL where the server asks for one',
    answer: 'asks-password',
    url: (port: number) => `postgres://app@127.0.0.1:${port}/ws`,
    says: /asks user app for a password and DATABASE_URL has none; add it/
  },
  {
    what: 'an unknown user: refused, with the server\'s words',
    answer: 'role',
    url: (port: number) => `postgres://app:pw-456@127.0.0.1:${port}/ws`,
    says: /refused user app \(role "app" does not exist\); correct the user in DATABASE_URL/
  },
  {
    what: 'a database missing: create it or correct its name',
    answer: 'database',
    url: (port: number) => `postgres://app:pw-789@127.0.0.1:${port}/ws_gone`,
    says: /the database ws_gone does not exist at 127\.0\.0\.1:\d+ \(database missing\); create it \(createdb ws_gone\)/
  },
  {
    what: 'a server that never answers: no answer within the connect timeout',
    answer: 'silent',
    url: (port: number) => `postgres://app:pw-000@127.0.0.1:${port}/ws`,
    says: /127\.0\.0\.1:\d+ did not answer within 500 ms \(no answer\); check that PostgreSQL runs there/
  }
] as const

// The headline case end to end: the one line a person sees, the exit code.
t.test(`DATABASE_URL: ${PG_FAULTS[0].what} (the service started)`, async t => {
  const fault = PG_FAULTS[0]
  const port = await fakePostgres(t, fault.answer)
  const o = await start({ DATABASE_URL: fault.url(port), SESSION_SECRET: 'x'.repeat(32), DATABASE_CONNECT_TIMEOUT_MS: '30000' })
  assertOneLine(t, o, 'DATABASE_URL', fault.says)
  t.notMatch(o.stderr, /start PostgreSQL there/, 'no advice to start a server that answered')
  t.notMatch(o.stderr + o.stdout, /wrong-pw-123/, 'the password is not printed')
})

// Every cause through the same buildApp the service runs (server.ts prints its message as above).
for (const fault of PG_FAULTS) {
  t.test(`DATABASE_URL: ${fault.what}`, async t => {
    const port = await fakePostgres(t, fault.answer)
    // The fake answers at once: only the silent one waits out the deadline, short there and
    // long elsewhere, so that a slow machine never turns an answer into "no answer".
    const config = loadConfig({
      DATABASE_URL: fault.url(port),
      SESSION_SECRET: 'x'.repeat(32),
      DATABASE_CONNECT_TIMEOUT_MS: fault.answer === 'silent' ? '500' : '30000',
      LOG_LEVEL: 'silent'
    }, { root: projectRoot, ephemeral: true })
    const err = await buildApp({ config, logger: false })
      .then(async app => { await app.close(); return null }, (e: unknown) => e)
    t.type(err, StartupError, 'a StartupError: one line, no stack')
    const message = (err as Error).message
    t.match(message, /^Start-up failed: DATABASE_URL: /, 'naming DATABASE_URL')
    t.match(message, fault.says)
    t.notMatch(message, /start PostgreSQL there/, 'no advice to start a server that answered')
    t.notMatch(message, /wrong-pw-123|pw-456|pw-789|pw-000/, 'the password is not printed')
  })
}

t.test('a host that does not exist names DATABASE_URL and says host not found', async t => {
  const config = loadConfig({
    DATABASE_URL: 'postgres://app:pw-111@no-such-host.invalid:5432/ws', SESSION_SECRET: 'x'.repeat(32), LOG_LEVEL: 'silent'
  }, { root: projectRoot, ephemeral: true })
  const err = await buildApp({ config, logger: false })
    .then(async app => { await app.close(); return null }, (e: unknown) => e)
  t.type(err, StartupError)
  t.match((err as Error).message, /^Start-up failed: DATABASE_URL: the host no-such-host\.invalid (was not found|could not be looked up)/)
  t.notMatch((err as Error).message, /start PostgreSQL there|pw-111/)
})

t.test('a database that does not exist names DATABASE_URL and the database', {
  skip: TEST_DATABASE_URL === null ? 'TEST_DATABASE_URL not set' : false
}, async t => {
  const url = new URL(TEST_DATABASE_URL as string)
  url.pathname = '/ws_no_such_database'
  const o = await start({ DATABASE_URL: url.href, SESSION_SECRET: 'x'.repeat(32) })
  assertOneLine(t, o, 'DATABASE_URL', /ws_no_such_database.*does not exist/)
})

t.test('a port another process holds names PORT', async t => {
  const { server, port } = await listening()
  t.teardown(() => { server.close() })
  const o = await start({ PORT: String(port), HOST: '127.0.0.1' })
  assertOneLine(t, o, 'PORT', new RegExp(`${port}.*in use`))
})

t.test('a metrics port another process holds names METRICS_PORT', async t => {
  const { server, port } = await listening()
  t.teardown(() => { server.close() })
  const o = await start({ METRICS_PORT: String(port), METRICS_HOST: '127.0.0.1' })
  assertOneLine(t, o, 'METRICS_PORT', new RegExp(`${port}.*in use`))
})

t.test('a DATA_DIR that cannot be made (under a file) names DATA_DIR', async t => {
  const file = join(dir, 'a-file')
  writeFileSync(file, 'not a directory')
  const o = await start({ DATA_DIR: join(file, 'data') })
  assertOneLine(t, o, 'DATA_DIR', /not a directory/)
})

t.test('a DATA_DIR under /proc names DATA_DIR at once instead of hanging', async t => {
  const o = await start({ DATA_DIR: '/proc/ws-data' })
  assertOneLine(t, o, 'DATA_DIR', /\/proc/)
})

t.test('a mail relay that refuses at start is a warning naming SMTP_URL, and health says so; the service runs', async t => {
  const port = await closedPort()
  const relay = await closedPort()
  const { DATABASE_URL: _db, REDIS_URL: _redis, NODE_OPTIONS: _loaders, ...base } = process.env
  const child = spawn(process.execPath, [...tsImport, 'src/server.ts'], {
    cwd: projectRoot,
    env: {
      ...base,
      PORT: String(port),
      METRICS_PORT: '',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      DATA_DIR: data,
      SMTP_URL: `smtp://127.0.0.1:${relay}`
    }
  })
  t.teardown(() => { child.kill('SIGKILL') })
  let stdout = ''
  child.stdout.setEncoding('utf8')
  const warning = await new Promise<{ msg: string }>((resolve, reject) => {
    const timer = setTimeout(() => { reject(new Error(`no SMTP_URL warning within ${BOUND_MS} ms: ${stdout}`)) }, BOUND_MS)
    child.stdout.on('data', (s: string) => {
      stdout += s
      const line = stdout.split('\n').find(l => l.includes('SMTP_URL'))
      if (line !== undefined) { clearTimeout(timer); resolve(JSON.parse(line) as { msg: string }) }
    })
  })
  t.match(warning, { level: 40 }, 'a warning')
  t.match(warning.msg, /^SMTP_URL: the mail relay does not answer \(E[A-Z]+\); invitation e-mails fail/, warning.msg)
  const health = await fetch(`http://127.0.0.1:${port}/api/health`)
  t.equal(health.status, 200, 'the service runs')
  t.match(await health.json(), { status: 'ok', checks: { mail: { status: 'unavailable' } } })
  child.kill('SIGTERM')
  const [code] = await once(child, 'exit') as [number | null]
  t.equal(code, 0, 'and stops cleanly')
})
