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
  assertOneLine(t, o, 'DATABASE_URL', new RegExp(`127\\.0\\.0\\.1:${port}.*refused`))
  t.notMatch(o.stderr + o.stdout, /s3cret-pw/, 'the password is not printed')
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
