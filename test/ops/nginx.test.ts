import t from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import {
  cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, chmodSync
} from 'node:fs'
import { request as httpRequest } from 'node:http'
import { freePort } from '../../scripts/lib/free-port.js'
import { nginxBinary, nginxPreamble } from '../../scripts/lib/nginx.js'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { simpleParser } from 'mailparser'
import { SMTPServer } from 'smtp-server'
import { projectRoot } from '../../src/paths.js'
import { HSTS } from '../../src/plugins/helmet.js'
import { tsImport, until } from '../helpers/service-process.js'

// The service as operators run it: a real process (src/server.ts) behind a real nginx, both on
// loopback. Checks what only a real proxy shows: the forwarded client address is the rate-limit
// key (and a spoofed one is not, from an untrusted peer), X-Forwarded-Proto makes the session
// cookie Secure, links come from PUBLIC_URL/APP_URL whatever the Host header says, and SIGTERM
// lets in-flight requests finish. Skips when there is no nginx binary (scripts/setup-nginx.sh).

const PUBLIC_URL = 'https://proxy.example.test'
const LIMIT = 3
const SECRET = randomBytes(32).toString('base64url')

interface Res { status: number, headers: Record<string, string | string[] | undefined>, body: string }

/** One HTTP/1.1 request on its own connection; node:http, so Host can be forged. */
// `from`: the loopback address the request leaves from. The public auth operations share one
// budget per client address, so checks that must not spend each other's budget use their own.
async function http (
  port: number,
  method: string,
  path: string,
  opts: { headers?: Record<string, string>, body?: unknown, from?: string } = {}
): Promise<Res> {
  const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body)
  const headers: Record<string, string> = {
    ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
    ...opts.headers
  }
  return await new Promise<Res>((resolve, reject) => {
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      method,
      path,
      headers,
      agent: false,
      timeout: 30_000,
      ...(opts.from !== undefined ? { localAddress: opts.from } : {})
    }, res => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on(
        'end',
        () => {
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8')
          })
        }
      )
      res.on('error', reject)
    })
    req.on('timeout', () => { req.destroy(new Error(`${method} ${path} timed out`)) })
    req.on('error', reject)
    req.end(payload)
  })
}

const sessionCookieOf = (res: Res): string | undefined =>
  [res.headers['set-cookie'] ?? []].flat().find(c => c.startsWith('service_session='))

interface Proc {
  child: ChildProcess
  output: () => string
  /** Resolves as soon as the process's output (stdout + stderr) so far satisfies `seen`. */
  printed: (seen: (output: string) => boolean) => Promise<void>
  exited: Promise<{ code: number | null, signal: NodeJS.Signals | null }>
}

// Every process this file starts, so teardown can end exactly those (and only those).
const started: Proc[] = []

function run (args: string[], env: Record<string, string>): Proc {
  const child = spawn(
    process.execPath, [...tsImport, ...args], { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] }
  )
  let out = ''
  const watchers = new Set<() => void>()
  const append = (c: Buffer): void => { out += c.toString(); for (const w of watchers) w() }
  child.stdout?.on('data', append)
  child.stderr?.on('data', append)
  const exited = new Promise<{
    code: number | null,
    signal: NodeJS.Signals | null
  }>(resolve => { child.on('exit', (code, signal) => { resolve({ code, signal }) }) })
  const printed = async (seen: (output: string) => boolean): Promise<void> => {
    await new Promise<void>((resolve, reject) => {
      const check = (): void => { if (seen(out)) { watchers.delete(check); resolve() } }
      watchers.add(check)
      exited.then(
        () => {
          if (watchers.delete(check)) {
            reject(
              new Error(`exited before printing what the test waits for:\n${out}`)
            )
          }
        },
        reject
      )
      check()
    })
  }
  const p = { child, output: () => out, printed, exited }
  started.push(p)
  return p
}

/**
 * Polls until fn() is truthy; bounded, so a service that never comes up fails the test. Only for
 * what announces itself with no event we can subscribe to (a port starting to answer, a file
 * appearing in a directory); log lines and e-mails are awaited as events.
 */
async function startService (port: number, env: Record<string, string>): Promise<Proc> {
  const p = run(['src/server.ts'], { ...env, PORT: String(port) })
  let up = false
  // A service that dies while starting fails at once, with its output.
  const died = new Promise<never>((_resolve, reject) => {
    p.exited.then(
      e => { if (!up) reject(new Error(`the service exited during start-up (${JSON.stringify(e)}):\n${p.output()}`)) },
      reject
    )
  })
  await Promise.race([
    until(`the service on port ${port}`, async () => (await http(port, 'GET', '/api/health')).status === 200 || undefined, 60_000), died
  ])
  up = true
  return p
}

/** The newest message in DATA_DIR/mail after `seen` files, parsed (quoted-printable decoded). */
async function nextMail (dataDir: string, seen: number): Promise<{ text: string, to: string, count: number }> {
  const dir = join(dataDir, 'mail')
  const files = await until('an e-mail in DATA_DIR/mail', () => {
    const f = existsSync(dir) ? readdirSync(dir).filter(n => n.endsWith('.eml')).sort() : []
    return f.length > seen ? f : undefined
  }, 15_000)
  const parsed = await simpleParser(readFileSync(join(dir, files[files.length - 1] as string)))
  const to = Array.isArray(parsed.to) ? parsed.to[0]?.text ?? '' : parsed.to?.text ?? ''
  return { text: parsed.text ?? '', to, count: files.length }
}

const mailCount = (dataDir: string): number => existsSync(
  join(dataDir, 'mail')
)
  ? readdirSync(join(dataDir, 'mail')).filter(n => n.endsWith('.eml')).length
  : 0
/**
 * A loopback SMTP peer for A that keeps what it receives and can hold its answer to DATA
 * (hold()/release()), so invitations stay in flight inside the service for as long as the
 * test wants.
 */
async function holdingSmtp (t: { teardown(fn: () => unknown): void }) {
  const texts: string[] = []
  const arrivals: Array<() => void> = []
  let held: Array<() => void> | null = null
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData (stream, _session, cb) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        const keep = (text: string): void => { texts.push(text); for (const w of arrivals.splice(0)) w() }
        simpleParser(Buffer.concat(chunks)).then(m => { keep(m.text ?? '') }, () => { keep('(unparseable)') })
        if (held !== null) held.push(() => { cb() })
        else cb()
      })
    }
  })
  await new Promise<void>(resolve => { server.listen(0, '127.0.0.1', () => { resolve() }) })
  t.teardown(async () => { await new Promise<void>(resolve => { server.close(() => { resolve() }) }) })
  return {
    url: `smtp://127.0.0.1:${(server.server.address() as { port: number }).port}`,
    texts,
    hold () { held = [] },
    release () { const h = held ?? []; held = null; for (const f of h) f() },
    /** The e-mail after `seen`, as soon as it arrives (bounded: 15 s). */
    async next (seen: number): Promise<string> {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => { reject(new Error('no e-mail arrived at the SMTP peer within 15 s')) }, 15_000)
        const check = (): void => {
          if (texts.length > seen) { clearTimeout(timer); resolve() } else arrivals.push(check)
        }
        check()
      })
      return texts[seen] as string
    }
  }
}

const tokenIn = (
  text: string,
  path: string
): string => new RegExp(`${path}\\?token=([A-Za-z0-9_%-]+)`).exec(text)?.[1] ?? ''

const nginx = nginxBinary()

t.test('behind a real nginx', {
  skip: nginx === null ? 'no nginx binary found (run scripts/setup-nginx.sh, or apt-get install nginx)' : false
}, async t => {
  const root = mkdtempSync(join(tmpdir(), 'ws-nginx-'))
  chmodSync(root, 0o755)
  t.teardown(async () => {
    for (const p of started) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL')
    await Promise.all(started.map(async p => await p.exited))
    rmSync(root, { recursive: true, force: true })
  })

  // Database: a throwaway PostgreSQL database shared by both instances when TEST_DATABASE_URL
  // is set; otherwise each instance has its own embedded database (B's a copy of A's).
  const dataA = join(root, 'data-a')
  const dataB = join(root, 'data-b')
  let databaseUrl: string | null = null
  if (process.env.TEST_DATABASE_URL !== undefined) {
    const name = `ws_nginx_${randomBytes(5).toString('hex')}`
    const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL })
    await admin.connect()
    await admin.query(`CREATE DATABASE ${name}`)
    await admin.end()
    const u = new URL(process.env.TEST_DATABASE_URL)
    u.pathname = `/${name}`
    databaseUrl = u.toString()
    t.teardown(async () => {
      const c = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL })
      await c.connect()
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await c.end()
    })
  }
  const base = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? root,
    APP_ENV: 'local',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    SESSION_SECRET: SECRET,
    AUTH_RATE_LIMIT_PER_MINUTE: String(LIMIT),
    INVITE_EMAILS_PER_HOUR: '10000',
    ...(databaseUrl !== null ? { DATABASE_URL: databaseUrl } : {})
  }
  const [portA, portB, proxyA, proxyB] = [await freePort(), await freePort(), await freePort(), await freePort()]
  // A: trusts the proxy on 127.0.0.1, is public at https://proxy.example.test, mails through
  // SMTP; logs at info so the test can see each request arrive ("incoming request").
  const smtp = await holdingSmtp(t)
  // (d) holds the peer's answers for as long as the shutdown takes to begin, which on a loaded
  // machine can outlast the 5 s default send deadline: the test is of the drain, not of that deadline.
  const envA = {
    ...base, DATA_DIR: dataA, TRUST_PROXY: '127.0.0.1', PUBLIC_URL, SMTP_URL: smtp.url, LOG_LEVEL: 'info', SMTP_TIMEOUT_MS: '60000'
  }
  // B: plain-http local; trusts only a proxy at 127.0.0.2, so a client calling it directly
  // from 127.0.0.1 is not trusted (nginx's second server reaches it from 127.0.0.2).
  const envB = { ...base, DATA_DIR: dataB, TRUST_PROXY: '127.0.0.2', PUBLIC_URL: `http://127.0.0.1:${portB}` }

  // First admins, as an operator makes them (create-admin prints the signup link last). With
  // embedded databases B starts from a copy of A's (initialised once), and B's admin is made
  // in that copy while A starts.
  const createAdmin = async (who: 'a' | 'b', dataDir: string): Promise<string> => {
    const p = run(
      ['scripts/create-admin.ts', '--email', `admin-${who}@proxy.test`, '--workspace', `Proxy ${who}`],
      { ...base, DATA_DIR: dataDir, PUBLIC_URL }
    )
    const { code } = await p.exited
    t.equal(code, 0, `create-admin ${who} exits 0`)
    const link = p.output().trim().split('\n').pop() ?? ''
    t.match(link, /^https:\/\/proxy\.example\.test\/signup\?token=/, 'the printed link is on PUBLIC_URL')
    return tokenIn(link, '/signup')
  }
  const tokens = { a: await createAdmin('a', dataA), b: '' }
  if (databaseUrl === null) cpSync(dataA, dataB, { recursive: true })
  else mkdirSync(dataB, { recursive: true })
  const [a] = await Promise.all([
    startService(portA, envA),
    (async () => { tokens.b = await createAdmin('b', dataB); return await startService(portB, envB) })()
  ])

  // nginx in the foreground with a configuration of our own, on two loopback ports.
  const prefix = join(root, 'nginx')
  for (const d of ['', 'tmp', 'tmp/body', 'tmp/proxy']) mkdirSync(join(prefix, d), { recursive: true, mode: 0o777 })
  const location = (upstream: number, proto: string, bind = '') => `
      location / {
        proxy_pass http://127.0.0.1:${upstream};
        ${bind}
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_set_header Host $http_host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_set_header X-Forwarded-Proto ${proto};
        proxy_read_timeout 30s;
      }`
  writeFileSync(join(prefix, 'nginx.conf'), `${nginxPreamble(prefix)}
  # The scheme the "TLS terminator" saw, chosen per request by the test (X-Test-Proto).
  map $http_x_test_proto $test_proto { default http; https https; }
  server {
    listen 127.0.0.1:${proxyA};
    ${location(portA, 'https')}
  }
  server {
    listen 127.0.0.1:${proxyB};
    ${location(portB, '$test_proto', 'proxy_bind 127.0.0.2;')}
  }
}
`)
  const ngx = spawn(
    nginx as string,
    ['-p', prefix, '-e', join(prefix, 'error.log'), '-c', join(prefix, 'nginx.conf'), '-g', 'daemon off;'],
    { stdio: ['ignore', 'pipe', 'pipe'] }
  )
  let ngxOut = ''
  ngx.stderr?.on('data', (c: Buffer) => { ngxOut += c.toString() })
  const ngxExited = new Promise<void>(resolve => { ngx.on('exit', () => { resolve() }) })
  t.teardown(async () => {
    if (ngx.exitCode === null && ngx.signalCode === null) ngx.kill('SIGQUIT')
    await Promise.race([ngxExited, new Promise(resolve => setTimeout(resolve, 5000))])
    if (ngx.exitCode === null && ngx.signalCode === null) ngx.kill('SIGKILL')
  })
  await until('nginx', async () => {
    if (ngx.exitCode !== null) throw new Error(`nginx exited: ${ngxOut}`)
    return ((await http(
      proxyA, 'GET', '/api/health'
    )).status === 200 && (await http(proxyB, 'GET', '/api/health')).status === 200) || undefined
  }, 15_000)

  let adminCookieA = ''

  await t.test('(a) the forwarded client address is the rate-limit key', async t => {
    const ask = async (xff: string) => await http(
      proxyA, 'POST', '/api/auth/login-link',
      { headers: { 'x-forwarded-for': xff }, body: { email: 'nobody@proxy.test' } }
    )
    for (let i = 1; i <= LIMIT; i++) {
      t.equal(
        (await ask('203.0.113.1')).status, 202, `client 203.0.113.1, request ${i} of ${LIMIT}`
      )
    }
    const over = await ask('203.0.113.1')
    t.equal(over.status, 429, 'the same client over the limit')
    t.equal((JSON.parse(over.body) as { code: string }).code, 'RATE_LIMITED')
    t.ok(over.headers['retry-after'] !== undefined, 'with Retry-After')
    t.equal((await ask('203.0.113.2')).status, 202, 'another client behind the same proxy has its own budget')
  })

  await t.test('(a) a spoofed X-Forwarded-For from an untrusted peer does not change the key', async t => {
    const statuses: number[] = []
    // Each request claims a new address; B does not trust 127.0.0.3, so all share one budget
    // (the public auth operations share one per client address: this check leaves from its own).
    for (let i = 1; i <= LIMIT + 1; i++) {
      const res = await http(
        portB, 'POST', '/api/auth/invitation',
        { headers: { 'x-forwarded-for': `198.51.100.${i}` }, body: { token: 'not-a-real-token' }, from: '127.0.0.3' }
      )
      statuses.push(res.status)
    }
    t.equal(
      statuses.filter(s => s === 429).length, 1,
      `limited after ${LIMIT} requests whatever X-Forwarded-For says (${statuses.join(', ')})`
    )
    t.equal(statuses[LIMIT], 429, 'the request over the limit is the one refused')
    // Control: through the trusted proxy the same claims are believed (A, fresh addresses).
    const viaProxy = await Promise.all(
      [1, 2, 3, 4].map(async i => (await http(
        proxyA, 'POST', '/api/auth/login-link',
        { headers: { 'x-forwarded-for': `198.51.100.${i}` }, body: { email: 'nobody@proxy.test' } }
      )).status)
    )
    t.same(viaProxy, [202, 202, 202, 202], 'through the trusted proxy each claimed address has its own budget')
  })

  await t.test('(b) X-Forwarded-Proto: https makes the session cookie Secure and turns on HSTS', async t => {
    // A through nginx (X-Forwarded-Proto: https; PUBLIC_URL is https too).
    const signup = await http(
      proxyA, 'POST', '/api/auth/signup',
      { headers: { 'x-forwarded-for': '203.0.113.20' }, body: { token: tokens.a, name: 'Admin A' } }
    )
    t.equal(signup.status, 201, 'signup through nginx')
    const cookie = sessionCookieOf(signup) ?? ''
    t.match(cookie, /; Secure/i, 'Secure')
    t.match(cookie, /; HttpOnly/i, 'HttpOnly')
    t.match(cookie, /; SameSite=Lax/i, 'SameSite=Lax')
    t.equal(signup.headers['strict-transport-security'], HSTS, 'HSTS: PUBLIC_URL is https')
    t.equal(signup.headers['x-content-type-options'], 'nosniff', 'the security headers pass through nginx')
    adminCookieA = cookie.split(';')[0] as string

    // B is plain-http local: Secure only when a trusted proxy says the client used https.
    const direct = await http(
      portB, 'POST', '/api/auth/signup',
      { headers: { 'x-forwarded-proto': 'https' }, body: { token: tokens.b }, from: '127.0.0.6' }
    )
    t.equal(direct.status, 201, 'signup directly at B')
    t.notMatch(sessionCookieOf(direct) ?? '', /Secure/i, 'X-Forwarded-Proto from an untrusted peer is ignored')
    t.notOk(direct.headers['strict-transport-security'], 'and turns on no HSTS')

    for (const proto of ['https', 'http']) {
      const seen = mailCount(dataB)
      // nginx appends the address it was reached from, and B trusts only nginx: that address is the
      // client, one per protocol so that the two rounds do not share an auth budget.
      const from = `127.0.0.${proto.length}`
      const asked = await http(
        proxyB, 'POST', '/api/auth/login-link',
        {
          headers: { 'x-test-proto': proto, 'x-forwarded-for': `192.0.2.${proto.length}` },
          body: { email: 'admin-b@proxy.test' },
          from
        }
      )
      t.equal(asked.status, 202)
      const mail = await nextMail(dataB, seen)
      const verify = await http(
        proxyB, 'POST', '/api/auth/verify',
        {
          headers: { 'x-test-proto': proto, 'x-forwarded-for': `192.0.2.${proto.length}` },
          body: { token: decodeURIComponent(tokenIn(mail.text, '/login')) },
          from
        }
      )
      t.equal(verify.status, 200, `login link verified through nginx (${proto})`)
      const c = sessionCookieOf(verify) ?? ''
      if (proto === 'https') t.match(c, /; Secure/i, 'through the proxy, X-Forwarded-Proto: https → Secure')
      else t.notMatch(c, /Secure/i, 'through the proxy, X-Forwarded-Proto: http → not Secure')
      t.equal(
        verify.headers['strict-transport-security'], proto === 'https' ? HSTS : undefined, `HSTS only over https (${proto})`
      )
    }
  })

  await t.test('(c) links come from PUBLIC_URL/APP_URL, never from the Host header', async t => {
    t.ok(adminCookieA !== '', 'signed in as admin A')
    const forged = { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-for': '203.0.113.30' }
    const seen = smtp.texts.length
    const invite = await http(
      proxyA, 'POST', '/api/users/invite',
      { headers: { ...forged, cookie: adminCookieA }, body: { email: 'invitee@proxy.test', role: 'member' } }
    )
    t.equal(invite.status, 200, 'invite with a forged Host')
    const url = (JSON.parse(invite.body) as { invitationUrl?: string }).invitationUrl ?? ''
    t.match(url, /^https:\/\/proxy\.example\.test\/signup\?token=/, 'invitationUrl is on PUBLIC_URL')
    const inviteMail = await smtp.next(seen)
    t.ok(inviteMail.includes(url), 'the e-mail carries that link')
    t.notMatch(inviteMail, /evil\.example/, 'and nothing from the forged Host')

    const asked = await http(
      proxyA, 'POST', '/api/auth/login-link', { headers: forged, body: { email: 'admin-a@proxy.test' } }
    )
    t.equal(asked.status, 202)
    const loginMail = await smtp.next(seen + 1)
    t.match(loginMail, /https:\/\/proxy\.example\.test\/login\?token=/, 'the login link is on PUBLIC_URL')
    t.notMatch(loginMail, /evil\.example/)
  })

  await t.test('(d) SIGTERM with requests in flight: every one completes, exit 0', async t => {
    t.ok(adminCookieA !== '', 'signed in as admin A')
    const N = 50
    const arrived = () => a.output().split('\n').filter(l => l.includes(
      '"incoming request"'
    ) && l.includes('/api/users/invite')).length
    const before = arrived()
    // The SMTP peer holds every send, so the invitations stay inside the service.
    smtp.hold()
    let done = 0
    const inflight = Array.from({ length: N }, async (_, i) => {
      const res = await http(
        proxyA, 'POST', '/api/users/invite',
        {
          headers: { cookie: adminCookieA, 'x-forwarded-for': '203.0.113.40' },
          body: { email: `drain-${i}@proxy.test`, role: 'member' }
        }
      )
      done++
      return res
    })
    // In flight = every request has reached the service (its "incoming request" log line).
    await a.printed(() => arrived() - before >= N)
    const pendingAtSignal = N - done
    const shuttingDown = a.printed(out => /shutting down/.test(out))
    a.child.kill('SIGTERM')
    // The shutdown has begun (its log line) with everything still held; now let the e-mails through.
    await shuttingDown
    smtp.release()
    const results = await Promise.all(inflight)
    const exit = await a.exited
    t.ok(pendingAtSignal > 0, `${pendingAtSignal} of ${N} requests were still in flight at SIGTERM`)
    const failed = results.filter(r =>
      r.status !== 200 || (JSON.parse(r.body) as { success?: boolean }).success !== true)
    t.same(
      failed.map(r => `${r.status} ${r.body.slice(0, 100)}`), [], 'no in-flight request failed; every body is complete'
    )
    t.same(exit, { code: 0, signal: null }, `the service exited 0 ${exit.code !== 0 ? a.output() : ''}`)
    const after = await http(proxyA, 'GET', '/api/health')
    t.equal(after.status, 502, 'and is gone afterwards (nginx answers 502)')
  })
})
