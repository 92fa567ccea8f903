import { execFileSync, fork } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { request as httpRequest, Agent } from 'node:http'
import { fileURLToPath } from 'node:url'
import { SMTPServer } from 'smtp-server'
import { projectRoot } from '../src/paths.js'
import { cpuUs, type Pinning } from './load.js'
import { analyzeProfile } from './profile.js'
import { cleanUp, startService, stop, throwawayDatabase } from './servers.js'

// `npm run bench -- --batch`: invitation batches on PostgreSQL against a loopback SMTP relay
// (smtp-server in this process) that accepts at most 20 connections, counting per address.
//   1. a plain nodemailer loop (bench/mail-loop.ts, its own process: a pool of 20 connections,
//      ROWS messages at once) — the rate the relay and a bare client reach;
//   2. the service (compiled, its own process, SMTP_POOL_CONNECTIONS=20): ROWS invitations as
//      batches of 1,000 (POST /api/invitations/batch, one after another), from the first request to the
//      last e-mail at the relay; every address must have exactly one message;
//   3. 200 concurrent POST /api/users/invite (a connection each): the statuses, never 500 or 502;
//      any 503 must carry Retry-After.
// Rounds alternate loop and service. Prints both rates, their ratio (target ≥ 0.8) and the statuses,
// and per round how long the requests took (writing the batches) beside the whole. With `profile`
// the service's first round is CPU-profiled (bench/profiles/batch-service.cpuprofile, summarized).

export interface BatchBenchOptions {
  pgUrl: string,
  pin: Pinning,
  rows: number,
  rounds: number,
  build: boolean,
  profile: boolean
  /** Single invites sent at once after the batches (default 200). */
  concurrentInvites?: number
}

const RELAY_CONNECTIONS = 20
const PER_REQUEST = 1000

interface Relay {
  url: string
  count: () => number
  /** Clients connected now: a round starts once the last round's client has let go of the relay. */
  connected: () => number
  perAddress: Map<string, number>
  close: () => Promise<void>
}

async function startRelay (): Promise<Relay> {
  const perAddress = new Map<string, number>()
  let count = 0
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    disableReverseLookup: true,
    logger: false,
    maxClients: RELAY_CONNECTIONS,
    onData (stream, session, cb) {
      stream.on('data', () => {})
      stream.on('end', () => {
        count++
        for (const r of session.envelope.rcptTo) perAddress.set(r.address, (perAddress.get(r.address) ?? 0) + 1)
        cb()
      })
    }
  })
  smtp.on('error', () => {})
  await new Promise<void>(resolve => { smtp.listen(0, '127.0.0.1', () => { resolve() }) })
  return {
    url: `smtp://127.0.0.1:${(smtp.server.address() as { port: number }).port}`,
    count: () => count,
    connected: () => smtp.connections.size,
    perAddress,
    close: async () => { await new Promise<void>(resolve => { smtp.close(() => { resolve() }) }) }
  }
}

async function until (what: string, ok: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 5))
  }
}

/** The plain loop in a process of its own; resolves with its messages per second and CPU time (µs). */
async function plainLoop (
  pin: Pinning, relayUrl: string, rows: number, round: number
): Promise<{ rate: number, cpuUs: number }> {
  const script = fileURLToPath(new URL('mail-loop.ts', import.meta.url))
  const child = fork(script, [relayUrl, String(rows), `loop${round}`], {
    cwd: projectRoot, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  if (child.pid !== undefined) pin.movePid(child.pid)
  return await new Promise((resolve, reject) => {
    child.once('message', m => { resolve(m as { rate: number, cpuUs: number }) })
    child.once('exit', code => { reject(new Error(`the mail loop exited ${String(code)}`)) })
  })
}

async function post (
  port: number, path: string, body: unknown, cookie: string, agent?: Agent
): Promise<{ status: number, retryAfter: string | undefined, body: string }> {
  const payload = JSON.stringify(body)
  return await new Promise(resolve => {
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path,
      ...(agent !== undefined ? { agent } : { agent: false }),
      headers: { 'content-type': 'application/json', cookie, 'content-length': Buffer.byteLength(payload) }
    }, res => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const retryAfter = res.headers['retry-after']
        resolve({ status: res.statusCode ?? 0, retryAfter, body: Buffer.concat(chunks).toString() })
      })
    })
    // A reset or refused connection is what a proxy in front would answer 502 for.
    req.on('error', err => { resolve({ status: 502, retryAfter: undefined, body: err.message }) })
    req.end(payload)
  })
}

interface ServiceRound {
  rate: number, seconds: number, requestSeconds: number, sentDuringRequests: number, cpuUs: number
}

/** The service's batches: ROWS rows as requests of 1,000 at once; messages per second at the relay. */
async function serviceBatches (
  port: number, pid: number, cookie: string, relay: Relay, rows: number, round: number
): Promise<ServiceRound> {
  const before = relay.count()
  const cpuBefore = cpuUs(pid)
  const started = performance.now()
  let requestMs = 0
  // One request after another, as a client would send them; the e-mails of the first go out meanwhile.
  for (let from = 0; from < rows; from += PER_REQUEST) {
    const length = Math.min(PER_REQUEST, rows - from)
    const batch = Array.from({ length }, (_, i) => ({ email: `svc${round}-${from + i}@bench.test` }))
    const asked = performance.now()
    const r = await post(port, '/api/invitations/batch', { rows: batch }, cookie)
    requestMs += performance.now() - asked
    // 202 for a batch of more than 25 rows; 201 (its results at once) for a small one (--batch-rows).
    if (r.status !== 202 && r.status !== 201) {
      throw new Error(`POST /api/invitations/batch answered ${r.status}: ${r.body.slice(0, 300)}`)
    }
  }
  const sentDuringRequests = relay.count() - before
  await until(`${rows} e-mails of the service`, () => relay.count() - before >= rows, 30 * 60_000)
  const seconds = (performance.now() - started) / 1000
  const cpu = cpuUs(pid) - cpuBefore
  return { rate: rows / seconds, seconds, requestSeconds: requestMs / 1000, sentDuringRequests, cpuUs: cpu }
}

/** The service's round under the CPU profiler (the preload bench/cpu-profile-on-signal.mjs). */
async function profiled<T> (pid: number | undefined, dir: string, work: () => Promise<T>): Promise<T> {
  writeFileSync(join(dir, 'next-name'), 'batch-service')
  process.kill(pid ?? 0, 'SIGWINCH')
  try { return await work() } finally {
    process.kill(pid ?? 0, 'SIGWINCH')
    await new Promise(resolve => setTimeout(resolve, 2000)) // the profile is written
  }
}

export async function runBatchBench (o: BatchBenchOptions): Promise<void> {
  if (o.build) execFileSync('npm', ['run', '--silent', 'build'], { cwd: projectRoot, stdio: 'inherit' })
  const relay = await startRelay()
  const db = await throwawayDatabase(o.pgUrl, 'ws_bench_batch')
  const out = (s: string): void => { process.stdout.write(s) }
  const profileDir = o.profile ? join(projectRoot, 'bench', 'profiles') : null
  if (profileDir !== null) mkdirSync(profileDir, { recursive: true })
  try {
    const svc = await startService(o.pin, 'postgres', relay.url, db.url, profileDir, {
      SMTP_POOL_CONNECTIONS: String(RELAY_CONNECTIONS), METRICS_PORT: ''
    })
    const loops: number[] = []
    const batches: number[] = []
    out(`batch bench: ${o.rows} e-mails per measure, relay accepting ${RELAY_CONNECTIONS} connections, PostgreSQL\n`)
    for (let r = 1; r <= o.rounds; r++) {
      // The service's SMTP pool lets go of its connections 2 s after its last send; the relay takes 20.
      await until('the relay to be free', () => relay.connected() === 0, 30_000)
      const l = await plainLoop(o.pin, relay.url, o.rows, r)
      loops.push(l.rate)
      await until('the relay to be free', () => relay.connected() === 0, 30_000)
      const pid = svc.proc.child.pid ?? 0
      const measure = async (): Promise<ServiceRound> =>
        await serviceBatches(svc.port, pid, svc.cookie, relay, o.rows, r)
      const m = profileDir !== null && r === 1
        ? await profiled(svc.proc.child.pid, profileDir, measure)
        : await measure()
      batches.push(m.rate)
      const perMail = (us: number): string => `${(us / o.rows).toFixed(0)} µs CPU per e-mail`
      const requests = `the ${Math.ceil(o.rows / PER_REQUEST)} requests ${m.requestSeconds.toFixed(1)} s`
      out(`  round ${r}: plain nodemailer loop ${l.rate.toFixed(0)} msg/s (${perMail(l.cpuUs)}), ` +
        `service batches ${m.rate.toFixed(0)} msg/s (${perMail(m.cpuUs)}; ${m.seconds.toFixed(1)} s, ` +
        `${requests}, ${m.sentDuringRequests} e-mails sent meanwhile)\n`)
    }
    const twice = [...relay.perAddress.entries()].filter(([, n]) => n > 1).length
    const best = (xs: number[]): number => Math.max(...xs)
    const ratio = best(batches) / best(loops)
    const rates = `loop ${best(loops).toFixed(0)} msg/s, service ${best(batches).toFixed(0)} msg/s`
    out(`  best: ${rates}, ratio ${ratio.toFixed(2)} ` +
      `(target ≥ 0.80: ${ratio >= 0.8 ? 'MET' : 'MISS'}); addresses e-mailed twice: ${twice}\n`)

    // Concurrent single invites (200 by default), one connection each.
    const concurrent = o.concurrentInvites ?? 200
    const agent = new Agent({ keepAlive: false, maxSockets: Infinity })
    const statuses = new Map<number, number>()
    let withoutRetryAfter = 0
    const answers = await Promise.all(Array.from({ length: concurrent }, async (_, i) =>
      await post(svc.port, '/api/users/invite', { email: `single${i}@bench.test`, role: 'member' }, svc.cookie, agent)))
    for (const a of answers) {
      statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1)
      if (a.status === 503 && a.retryAfter === undefined) withoutRetryAfter++
    }
    const bad = (statuses.get(500) ?? 0) + (statuses.get(502) ?? 0)
    const list = [...statuses.entries()].sort().map(([s, n]) => `${s}×${n}`).join(', ')
    out(`  ${concurrent} concurrent POST /api/users/invite: ${list}; 503 without Retry-After: ${withoutRetryAfter} ` +
      `(target: no 500/502: ${bad === 0 && withoutRetryAfter === 0 ? 'MET' : 'MISS'})\n`)
    await stop(svc.proc.child)
    if (profileDir !== null) out('\n' + analyzeProfile(join(profileDir, 'batch-service.cpuprofile')) + '\n')
  } finally {
    cleanUp()
    await relay.close()
    await db.drop()
  }
}
