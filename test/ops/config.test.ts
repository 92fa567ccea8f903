import t from 'tap'
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { ConfigError, loadConfig } from '../../src/config.js'
import { projectRoot } from '../../src/paths.js'
import { build, testConfig } from '../helpers/build.js'
import { loggerOptions } from '../../src/logger.js'
import { tsImport } from '../helpers/service-process.js'

t.test('a bad value stops start-up with one line naming the variable', async t => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ PORT: 'abc' }, /^Invalid configuration: PORT must be an integer from 0 to 65535 \(got "abc"\)$/],
    [
      { APP_ENV: 'prod' },
      /^Invalid configuration: APP_ENV must be one of local \| staging \| production \(got "prod"\)$/
    ],
    [{ LOG_LEVEL: 'loud' }, /^Invalid configuration: LOG_LEVEL must be one of/],
    [{ LOG_FORMAT: 'xml' }, /^Invalid configuration: LOG_FORMAT must be one of auto \| json \| pretty/],
    [{ INVITATION_TTL_DAYS: '31' }, /^Invalid configuration: INVITATION_TTL_DAYS must be an integer from 1 to 30/],
    [{ PUBLIC_URL: 'ftp://x' }, /^Invalid configuration: PUBLIC_URL must be a value matching/],
    [{ SESSION_SECRET: 'short' }, /SESSION_SECRET must be at least 32 bytes/],
    [{ APP_ENV: 'staging' }, /SESSION_SECRET \(at least 32 bytes\) is required when APP_ENV=staging/],
    [{ SLACK_CLIENT_ID: 'x' }, /must be set together/],
    [{ TRUST_PROXY: 'yes please' }, /TRUST_PROXY/],
    [{ SHUTDOWN_DRAIN_MS: '10000' }, /SHUTDOWN_DRAIN_MS must be less than SHUTDOWN_TIMEOUT_MS/]
  ]
  for (const [env, message] of cases) {
    t.throws(() => loadConfig(env, { root: projectRoot, ephemeral: true }), message, JSON.stringify(env))
    try { loadConfig(env, { root: projectRoot, ephemeral: true }) } catch (err) { t.type(err, ConfigError) }
  }
})

t.test('the server exits 1 with that one line on stderr', async t => {
  const r = spawnSync(process.execPath, [...tsImport, 'src/server.ts'], {
    cwd: projectRoot, env: { ...process.env, PORT: 'abc' }, encoding: 'utf8', timeout: 30_000
  })
  t.equal(r.status, 1)
  t.equal(r.stderr.trim(), 'Invalid configuration: PORT must be an integer from 0 to 65535 (got "abc")')
})

t.test('a new installation logs, once ready, its one-time setup link', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'ws-first-run-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const { DATABASE_URL: _server, ...env } = process.env // the embedded database, as on a new machine
  const child = spawn(process.execPath, [...tsImport, 'src/server.ts'], {
    cwd: projectRoot, env: { ...env, PORT: '0', DATA_DIR: dir, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe']
  })
  let out = ''
  const hint = await new Promise<string | null>(resolve => {
    const timer = setTimeout(() => { resolve(null) }, 90_000)
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString()
      const line = out.split('\n').find(l => l.includes('No workspace yet'))
      if (line !== undefined) { clearTimeout(timer); resolve(line) }
    })
    child.once('exit', () => { clearTimeout(timer); resolve(null) })
  })
  const exited = new Promise<number | null>(resolve => { child.once('exit', code => { resolve(code) }) })
  child.kill('SIGTERM')
  t.ok(hint, 'the hint is logged')
  t.match(
    JSON.parse(hint ?? '{}').msg,
    /^No workspace yet\. Open this link to set up the first workspace and its admin: http:\/\/localhost:0\/setup\?token=[A-Za-z0-9_-]{43}$/,
    'PUBLIC_URL/setup with the token: no stop, no second command'
  )
  t.ok(out.indexOf('workspace service ready') < out.indexOf('No workspace yet'), 'after the ready line')
  t.equal(await exited, 0, 'SIGTERM: exit 0')
})

t.test('config is typed, defaulted and frozen', async t => {
  const c = testConfig({ PORT: '8080', TRUST_PROXY: '127.0.0.1', APP_URL: 'https://app.example.com/' })
  t.equal(c.port, 8080)
  t.equal(c.trustProxy, '127.0.0.1')
  t.equal(c.appUrl, 'https://app.example.com', 'trailing slash removed')
  t.equal(c.publicUrl, 'http://localhost:8080')
  t.equal(c.invitationTtlDays, 7)
  t.ok(Object.isFrozen(c) && Object.isFrozen(c.session))
  t.equal(c.session.secureCookie, false, 'plain-http local: no Secure flag')
  t.equal(testConfig({ PUBLIC_URL: 'https://x.example.com' }).session.secureCookie, true)
  t.equal(testConfig({ TRUST_PROXY: '2' }).trustProxy, 2)
})

t.test('logs redact cookies, authorization headers and tokens in URLs', async t => {
  let out = ''
  const stream = new Writable({ write (chunk, _enc, cb) { out += String(chunk); cb() } })
  const h = await build(t, { logger: { ...loggerOptions('info'), stream } })
  const admin = await h.signIn()
  const secret = admin.cookie.split('=')[1] as string
  await h.inject({
    method: 'GET',
    url: '/api/users/me',
    headers: { cookie: admin.cookie, authorization: 'Bearer wsk_secret_value' }
  })
  await h.inject({ method: 'GET', url: '/signup?token=tok_very_secret_value' })
  h.app.log.info({ token: 'tok_in_object', nested: { secret: 'nested_secret' } }, 'object fields')
  t.match(out, /"url":"\/signup\?token=\[REDACTED\]"/, 'query token redacted')
  for (const s of [secret, 'wsk_secret_value', 'tok_very_secret_value', 'tok_in_object', 'nested_secret']) {
    t.notOk(out.includes(s), `log does not contain ${s.slice(0, 12)}…`)
  }
})
