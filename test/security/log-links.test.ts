import t from 'tap'
import { spawn, spawnSync } from 'node:child_process'
import { Writable } from 'node:stream'
import Fastify from 'fastify'
import { loggerOptions } from '../../src/logger.js'
import { projectRoot } from '../../src/paths.js'
import { closedPort, startSmtp } from '../helpers/smtp.js'
import { until, tsImport } from '../helpers/service-process.js'
import { seededDataDir } from '../helpers/build.js'

// No live link in the logs. Outside `local` the service refuses to start without SMTP_URL (the
// dev mailbox would log each sign-in link); a token-bearing URL in any logged field is censored;
// and a real run that signs in, invites and asks for a login link leaves no usable link in its logs.

const TOKEN_URL = /https?:\/\/[^\s"'<>\\]+[?&](?:token|code|state)=([^&\s"'<>\\]+)/g

t.test('outside local, a start without SMTP_URL stops with one line naming it', async t => {
  const { SMTP_URL: _none, ...env } = process.env
  for (const appEnv of ['staging', 'production']) {
    const r = spawnSync(process.execPath, [...tsImport, 'src/server.ts'], {
      cwd: projectRoot,
      env: {
        ...env,
        APP_ENV: appEnv,
        SESSION_SECRET: 's'.repeat(40),
        PUBLIC_URL: 'https://workspace.example.com',
        DATABASE_URL: 'postgres://127.0.0.1:1/none',
        PORT: '0'
      },
      encoding: 'utf8',
      timeout: 60_000
    })
    t.equal(r.status, 1, appEnv)
    t.match(r.stderr.trim(), /^Invalid configuration: SMTP_URL is required when APP_ENV=(staging|production) \(/, appEnv)
    t.equal(r.stderr.trim().split('\n').length, 1, 'one line')
    t.notMatch(r.stdout, /token=/)
  }
})

t.test('a link-shaped value is censored in any field, nested too; other URLs stay', async t => {
  const lines: string[] = []
  const stream = new Writable({ write (chunk: Buffer, _enc, cb) { lines.push(chunk.toString()); cb() } })
  const app = Fastify({ logger: { ...loggerOptions('info'), stream } })
  t.teardown(async () => { await app.close() })
  const log = app.log
  log.info({
    link: 'https://app.example/login?token=live-login-secret',
    detail: { next: 'http://x.example/signup?a=1&token=live-signup-secret#f', list: ['https://x.example/setup?TOKEN=live-setup'] },
    note: 'see https://x.example/cb?code=live-code&state=live-state for details',
    url: 'https://workspace.example.com'
  }, 'hello')
  const out = lines.join('')
  for (const secret of ['live-login-secret', 'live-signup-secret', 'live-setup', 'live-code', 'live-state']) {
    t.notOk(out.includes(secret), `${secret} is not logged`)
  }
  const record = JSON.parse(out) as Record<string, unknown>
  t.equal(record.link, 'https://app.example/login?token=[REDACTED]')
  t.same(record.detail, {
    next: 'http://x.example/signup?a=1&token=[REDACTED]#f',
    list: ['https://x.example/setup?TOKEN=[REDACTED]']
  })
  t.equal(record.url, 'https://workspace.example.com', 'a URL without a token is kept')
})

t.test('a real run outside local leaves no usable link in its logs', async t => {
  const smtp = await startSmtp(t)
  const dir = await seededDataDir(t, 'ws-log-links-')
  const port = await closedPort()
  const { DATABASE_URL: _server, ...env } = process.env
  const child = spawn(process.execPath, [...tsImport, 'src/server.ts'], {
    cwd: projectRoot,
    env: {
      ...env,
      APP_ENV: 'staging',
      SESSION_SECRET: 's'.repeat(40),
      SMTP_URL: smtp.url,
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      PORT: String(port),
      DATA_DIR: dir,
      LOG_LEVEL: 'trace',
      LOG_FORMAT: 'json'
    },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  let out = ''
  child.stdout.on('data', (c: Buffer) => { out += c.toString() })
  child.stderr.on('data', (c: Buffer) => { out += c.toString() })
  const base = `http://127.0.0.1:${port}`

  // The first run's setup link is the one link logged on purpose (while no workspace exists).
  const setupToken = await until('the setup link', async () => /\/setup\?token=([\w-]+)/.exec(out)?.[1], 120_000)
  const setup = await fetch(`${base}/api/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token: setupToken, workspaceName: 'Acme', email: 'admin@example.com' })
  })
  t.equal(setup.status, 201)
  const cookie = (setup.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
  // An invitation e-mail, a login-link e-mail, and the link pages opened with their tokens.
  const invite = await fetch(`${base}/api/users/invite`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify({ email: 'new@example.com', role: 'member' })
  })
  t.equal(invite.status, 200)
  const invitationMail = await smtp.nextMessage(0, 10_000)
  await fetch(`${base}/api/auth/login-link`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'admin@example.com' })
  })
  const loginMail = await smtp.nextMessage(1, 10_000)
  const mailed = [invitationMail, loginMail].map(m => /token=([\w-]+)/.exec(m.text)?.[1])
  t.ok(mailed.every(tok => tok !== undefined && tok.length > 20), 'both e-mails carry a link')
  for (const tok of mailed) await fetch(`${base}/signup?token=${tok ?? ''}`)

  const again = await fetch(`${base}/api/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token: setupToken, workspaceName: 'Other', email: 'x@example.com' })
  })
  t.equal(again.status, 410, 'the logged setup link is used up')
  child.kill('SIGTERM')
  await new Promise(resolve => child.once('exit', resolve))
  t.match(out, /workspace service ready/)
  for (const tok of mailed) t.notOk(out.includes(tok ?? '-'), 'a mailed token is nowhere in the logs')
  // Every token-bearing URL left in the logs is censored or no longer usable (the setup link, used).
  const logged = [...out.matchAll(TOKEN_URL)].map(m => decodeURIComponent(m[1] ?? ''))
  t.ok(logged.length > 0, 'link-shaped URLs were logged (censored)')
  for (const value of logged) {
    if (value === '[REDACTED]') continue
    t.equal(value, setupToken, 'only the setup link is logged whole')
  }
  t.ok(out.includes('"msg":"No workspace yet.') || out.includes('No workspace yet.'))
})
