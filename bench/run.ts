// `npm run bench` (not part of npm test): throughput, latency, CPU and memory of the service as
// `npm start` runs it (compiled, dist/src/server.js, LOG_LEVEL=warn, metrics on, security headers
// on, tracing off), against baselines measured in the same run, scenarios alternating round by
// round so drift hits all alike:
//   - hand-written servers doing the same work without the contract binding, on Fastify
//     (bench/hand-written.ts: same schemas, Ajv options, JWT cookie check, SQL, logger, plugins),
//     Hono and Express (bench/hand-written-hono.ts, -express.ts: the same work by hand,
//     bench/hand-written-operations.ts); their shared start and SQL: bench/hand-written-work.ts;
//   - bare Fastify answering GET /api/health with the service's body and JSON headers (the limit);
//   - the "raw work" of an invitation (bench/raw-worker.ts: the session's authentication and the
//     invitation service's own invite, SMTP send included, in a loop, no HTTP, same concurrency).
// Scenarios: health, 401 (invite without a cookie), 400 (admin, invalid body), 404 (unknown
// path), 429 (an API key past its limit on /api/mcp), a list page (GET /api/invitations?limit=50
// in a workspace of --invitations invitations) and an invite (admin, fallback path, a unique
// e-mail per request, loopback SMTP), on PGlite and on PostgreSQL (a throwaway database created
// and dropped here). Prints a table and MET/MISS lines; writes bench/results.json.
// Modules: bench/servers.ts (the processes), bench/load.ts (autocannon, RSS, CPU, taskset),
// bench/scenarios.ts, bench/report.ts (table, targets, results.json), bench/profile.ts,
// bench/seed.ts (the list page's invitations), bench/cpu-profile-on-signal.mjs (--profile).
// Other modes, each in its own module: --scale, --jobs, --funnel, --directory, --scim, --batch,
// --instructions, --console, --sso (bench/sso.ts, its identity providers in bench/sso-peers.ts) and
// --audit-export (bench/audit-export.ts) and --emails (bench/emails.ts).
//
// Usage: USAGE below (`npm run bench -- --help` prints it).
import { execFileSync, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { projectRoot } from '../src/paths.js'
import { startSinkSmtp } from '../scripts/lib/measure-peers.js'
import { measure, pinCpus, type Pinning, type Round } from './load.js'
import { analyzeProfile } from './profile.js'
import { measureStarts } from './start.js'
import { measureConsole, runConsoleBench } from './console.js'
import { formatTable, summarize, targets, writeResults } from './report.js'
import { runScale } from './scale.js'
import { runJobPickup } from './jobs.js'
import { runFunnel } from './funnel.js'
import { runDirectory } from './directory.js'
import { runScimImport } from './scim-import.js'
import { runAuditExport } from './audit-export.js'
import { runEmails } from './emails.js'
import { runSso } from './sso.js'
import { runBatchBench } from './batch.js'
import { runInstructions } from './instructions.js'
import { scenarios as scenarioList, type Scenario, type Variant } from './scenarios.js'
import {
  cleanUp, FRAMEWORKS, startBare, startBareAfterApp, startHandWritten, startRawWorker, startService, stop,
  throwawayDatabase, type HandWritten, type RawWorker, type Service
} from './servers.js'

const POSTGRES_SERVER = 'postgres://postgres@127.0.0.1:5432/postgres'
// What `npm run bench -- --help` prints.
const USAGE = `Where each figure comes from and what it measured last: docs/performance.md.

npm run bench                                   # 5 rounds × 5 s per scenario, 50 connections: the service
                                                # against hand-written Fastify, Hono and Express (same work),
                                                # bare Fastify and the raw work of an invite
npm run bench -- --rounds 7 --duration 10 --connections 20
npm run bench -- --no-postgres                  # PGlite only (--no-pglite: PostgreSQL only)
npm run bench -- --launches 3 --only 'GET /api/health' --invitations 100
                                                # start every server 3 times, rounds pooled: a
                                                # process's own luck (docs/performance.md) evens out
npm run bench -- --no-start                     # skip the start-up targets (first start, restart)
npm run bench -- --no-console                   # skip the admin console's figures (bench/console.ts)
npm run bench -- --console                      # the admin console's figures alone, in Chromium: bytes on
                                                # the wire (first load of each screen, reload, next visit)
                                                # and Members over 10,000 members, 5 runs (bench/console.ts)
npm run bench -- --console --members 1000 --rounds 3
npm run bench -- --no-pin                       # do not pin servers and load generator to CPUs
npm run bench -- --costs                        # also what metrics, traces, headers and the app's
                                                # process (bare Fastify after building it) each cost
npm run bench -- --profile                      # CPU profile of round 1 of each scenario (bench/profiles/)
npm run bench -- --only 'postgres service 401' --profile   # a subset (the bare baseline always runs)
npm run bench -- --analyze bench/profiles/x.cpuprofile     # top frames of a profile
npm run bench -- --invitations 1000             # a smaller workspace for the list page (default 100k)
npm run bench -- --out /tmp/results.json        # write the results elsewhere
npm run bench -- --service-env METRICS_PORT=    # extra environment of the servers (repeatable; empty unsets)
npm run bench -- --scale                        # how cost grows with the data, PostgreSQL (bench/scale.ts)
npm run bench -- --scale --sizes 100,10000 --pools 10,20 --concurrent 50
                                                # other sizes, pool sizes, concurrent invites (health: 5×)
npm run bench -- --jobs                         # commit-to-delivery across instances, PostgreSQL (bench/jobs.ts)
npm run bench -- --jobs --events 50             # fewer events (default 200)
npm run bench -- --funnel                       # the funnel over 1M invitations, PostgreSQL (bench/funnel.ts)
npm run bench -- --funnel --invitations 100000 --runs 5
npm run bench -- --directory                    # a directory's first import of 1,000 people and lookups
                                                # among 10,000 members, embedded database (bench/directory.ts)
npm run bench -- --directory --people 100 --members 1000 --lookups 200
npm run bench -- --scim                         # SCIM import on PostgreSQL: 4 directory clients at once
                                                # (a workspace and key each) import 2,000 people a round
                                                # through POST /api/scim/v2/Users, 5 rounds: people/s and
                                                # the service's CPU ms a person, target ≥ 400 people/s
                                                # (bench/scim-import.ts)
npm run bench -- --scim --clients 4 --people 4000 --rounds 3
npm run bench -- --sso                          # single sign-on, the relying party alone (the IdPs in a
                                                # process of their own): CPU per OIDC callback and per SAML
                                                # Response (assertion signed; Response and assertion signed),
                                                # median and p90 of 200 after 20, target ≤ 5 ms each; discovery,
                                                # JWKS and SAML metadata (by URL) fetches counted per cache
                                                # period (bench/sso.ts)
npm run bench -- --sso --sign-ins 500
npm run bench -- --audit-export                 # the audit trail exported whole on PostgreSQL, NDJSON then CSV:
                                                # records/s (target ≥ 50,000) and the service's peak RSS above
                                                # idle (≤ 50 MB), every record once and in order
                                                # (bench/audit-export.ts)
npm run bench -- --audit-export --records 100000
npm run bench -- --emails                       # CPU per rendered invitation e-mail in each language, after
                                                # the first (which compiles its messages): median, p90 and
                                                # mean of 2000, target ≤ 1 ms (bench/emails.ts)
npm run bench -- --batch --rounds 2             # invitation batches against a plain nodemailer loop, and
                                                # 200 concurrent invites, PostgreSQL (bench/batch.ts);
                                                # --batch-rows 10000 e-mails a measure, --concurrent 200
npm run bench -- --batch --rounds 1 --profile   # the same, the service's round CPU-profiled
npm run bench -- --instructions --rounds 3      # instructions per request under valgrind's callgrind:
                                                # bare Fastify and health (PostgreSQL; --no-postgres:
                                                # PGlite), deterministic where req/s is not (bench/instructions.ts);
                                                # --requests 10000 a round, --warmup-requests 60000;
                                                # --profile keeps the last round's callgrind files
                                                # in bench/profiles/ (callgrind_annotate reads them)
npm run bench -- --help                         # this
`

const options = {
  help: { type: 'boolean', short: 'h', default: false },
  rounds: { type: 'string', default: '5' },
  launches: { type: 'string', default: '1' },
  // 100,000 for the list page's workspace; --funnel: 1,000,000.
  invitations: { type: 'string' },
  duration: { type: 'string', default: '5' },
  warmup: { type: 'string', default: '2' },
  connections: { type: 'string', default: '50' },
  'pg-url': { type: 'string', default: process.env.BENCH_DATABASE_URL ?? POSTGRES_SERVER },
  'no-postgres': { type: 'boolean', default: false },
  'no-pglite': { type: 'boolean', default: false },
  'no-start': { type: 'boolean', default: false },
  'no-console': { type: 'boolean', default: false },
  console: { type: 'boolean', default: false },
  'no-build': { type: 'boolean', default: false },
  'no-pin': { type: 'boolean', default: false },
  profile: { type: 'boolean', default: false },
  costs: { type: 'boolean', default: false },
  out: { type: 'string', default: join(projectRoot, 'bench', 'results.json') },
  analyze: { type: 'string' },
  only: { type: 'string' },
  'service-env': { type: 'string', multiple: true, default: [] as string[] },
  scale: { type: 'boolean', default: false },
  sizes: { type: 'string', default: '100,100000,1000000' },
  pools: { type: 'string', default: '5,10,20,40' },
  concurrent: { type: 'string', default: '200' },
  jobs: { type: 'boolean', default: false },
  events: { type: 'string', default: '200' },
  funnel: { type: 'boolean', default: false },
  directory: { type: 'boolean', default: false },
  // --directory: 1,000 (one import); --scim: 2,000 a round, shared among the clients.
  people: { type: 'string' },
  scim: { type: 'boolean', default: false },
  'audit-export': { type: 'boolean', default: false },
  emails: { type: 'boolean', default: false },
  'email-count': { type: 'string', default: '2000' },
  records: { type: 'string', default: '1000000' },
  clients: { type: 'string', default: '4' },
  members: { type: 'string', default: '10000' },
  lookups: { type: 'string', default: '1000' },
  runs: { type: 'string', default: '20' },
  batch: { type: 'boolean', default: false },
  sso: { type: 'boolean', default: false },
  'sign-ins': { type: 'string', default: '200' },
  'batch-rows': { type: 'string', default: '10000' },
  instructions: { type: 'boolean', default: false },
  requests: { type: 'string', default: '10000' },
  'warmup-requests': { type: 'string', default: '60000' }
} satisfies ParseArgsConfig['options']

/** The command line; a mistake in it is one line and the usage, exit code 2 (not a stack trace). */
function parseCommandLine () {
  try {
    return parseArgs({ options, strict: true }).values
  } catch (err) {
    process.stderr.write(`bench: ${(err as Error).message}\n\n${USAGE}`)
    process.exit(2)
  }
}
const values = parseCommandLine()
if (values.help) {
  process.stdout.write(USAGE)
  process.exit(0)
}

/** A whole number option (≥ 0), or a comma-separated list of them. */
function whole (name: string, value: string): number {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} expects a whole number, got "${value}"`)
  return n
}
const wholes = (name: string, value: string): number[] => value.split(',').map(v => whole(name, v.trim()))

type DbSpec = Array<{ db: 'pglite' | 'postgres', url: string | null }>

/**
 * `--costs`: per database, the service without metrics, the service with traces (to an OTLP sink
 * here that accepts and discards), and the hand-written server without security headers.
 */
async function startVariants (
  pin: Pinning, dbs: DbSpec, smtpUrl: string, env: Record<string, string>
): Promise<Array<ReturnType<typeof variant>>> {
  const sink = createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(200).end('{}') }) })
  await new Promise<void>(resolve => { sink.listen(0, '127.0.0.1', resolve) })
  sink.unref()
  const otlp = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`
  const out = []
  for (const { db, url } of dbs) {
    const noMetrics = await startService(pin, db, smtpUrl, url, null, { ...env, METRICS_PORT: '' })
    const traced = await startService(pin, db, smtpUrl, url, null, { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: otlp })
    const noHeaders = await startHandWritten(pin, db, smtpUrl, url, env, 0, null, 'Fastify', ['--no-security-headers'])
    out.push(
      variant(db, 'service, no metrics', noMetrics.port, noMetrics.proc.child),
      variant(db, 'service + traces', traced.port, traced.proc.child),
      variant(db, 'hand-written, no headers', noHeaders.port, noHeaders.child)
    )
  }
  return out
}

function variant (db: string, server: Variant, port: number, child: ChildProcess) {
  return { db, server, port, pid: () => child.pid ?? 0, child }
}

/** `group-server-scenario` as a file name. */
const profileName = (s: Scenario): string =>
  `${s.group}-${s.server}-${s.name}`.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/-+$/, '')

/**
 * Round 1 of a scenario on the service or the hand-written server, CPU-profiled by the preload
 * (bench/cpu-profile-on-signal.mjs): SIGWINCH before and after, the profile named in `next-name`.
 */
async function profiledRound (s: Scenario, seconds: number, profileDir: string): Promise<Round> {
  writeFileSync(join(profileDir, 'next-name'), profileName(s))
  process.kill(s.pid(), 'SIGWINCH')
  try {
    return await measure(s.run, s.pid, seconds)
  } finally {
    process.kill(s.pid(), 'SIGWINCH')
    await new Promise(resolve => setTimeout(resolve, 500))
  }
}

/** Warm-up, then `rounds` rounds of every scenario in turn, each round printed as it ends. */
async function runRounds (
  list: Scenario[], rounds: number, seconds: number, warmup: number, profileDir: string | null
): Promise<Map<Scenario, Round[]>> {
  const results = new Map<Scenario, Round[]>(list.map(s => [s, []]))
  for (const s of list) await s.run(warmup)
  for (let r = 1; r <= rounds; r++) {
    for (const s of list) {
      const profiled = profileDir !== null && r === 1 && s.server !== 'raw'
      const m = profiled ? await profiledRound(s, seconds, profileDir) : await measure(s.run, s.pid, seconds)
      results.get(s)?.push(m)
      const unexpected = m.unexpected > 0 ? `  (${m.unexpected} unexpected)` : ''
      const latency = `p50 ${m.p50.toFixed(1)} ms  p99 ${m.p99.toFixed(1)} ms`
      const figures = `${m.rps.toFixed(0).padStart(7)} req/s  ${latency}  rss ${m.peakRssMb.toFixed(0)} MB`
      const which = `${s.group.padEnd(8)} ${s.server.padEnd(20)} ${s.name.padEnd(26)}`
      process.stdout.write(`  round ${r}: ${which} ${figures}${unexpected}\n`)
    }
  }
  return results
}

/**
 * Every server of one launch (bare Fastify; per database the service, its hand-written twin and
 * its raw work; `--costs`' variants), and the scenarios against them.
 */
async function startServers (opts: {
  pin: Pinning
  dbs: DbSpec
  smtpUrl: string
  serviceEnv: Record<string, string>
  connections: number
  profileDir: string | null
}): Promise<{ list: Scenario[], stop: () => Promise<void> }> {
  const { pin, dbs, smtpUrl, serviceEnv, connections, profileDir } = opts
  const bare = await startBare(pin, profileDir)
  const invitations = whole('invitations', values.invitations ?? '100000')
  const services: Service[] = []
  const handWritten: HandWritten[] = []
  const raws = new Map<string, RawWorker>()
  for (const { db, url } of dbs) {
    process.stdout.write(`bench: starting the service, the hand-written ${FRAMEWORKS.join(', ')} servers ` +
      `and the raw work on ${db}\n`)
    services.push(await startService(pin, db, smtpUrl, url, profileDir, serviceEnv, invitations))
    for (const framework of FRAMEWORKS) {
      handWritten.push(await startHandWritten(pin, db, smtpUrl, url, serviceEnv, invitations, profileDir, framework))
    }
    raws.set(db, await startRawWorker(pin, db, smtpUrl, url, connections))
  }
  const variants = values.costs ? await startVariants(pin, dbs, smtpUrl, serviceEnv) : []
  const afterApp = values.costs ? await startBareAfterApp(pin, smtpUrl) : null
  const list = scenarioList({
    barePort: bare.port,
    barePid: () => bare.proc.child.pid ?? 0,
    services,
    handWritten,
    raws,
    variants,
    ...(afterApp !== null ? { bareAfterApp: { port: afterApp.port, pid: () => afterApp.proc.child.pid ?? 0 } } : {}),
    connections,
    only: values.only
  })
  const stopAll = async (): Promise<void> => {
    for (const w of raws.values()) w.child.send({ type: 'stop' })
    for (const h of handWritten) await stop(h.child)
    await stop(bare.proc.child)
    if (afterApp !== null) await stop(afterApp.proc.child)
    for (const s of services) await stop(s.proc.child)
    for (const v of variants) await stop(v.child)
  }
  return { list, stop: stopAll }
}

async function main (): Promise<void> {
  const rounds = Number(values.rounds)
  const launches = Number(values.launches)
  if (!Number.isInteger(launches) || launches < 1) {
    throw new Error(`--launches expects a whole number ≥ 1, got "${values.launches}"`)
  }
  const seconds = Number(values.duration)
  const warmup = Number(values.warmup)
  const connections = Number(values.connections)
  const pin = pinCpus(!values['no-pin'])

  if (!values['no-build']) {
    process.stdout.write('bench: npm run build\n')
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: projectRoot, stdio: 'inherit' })
  }
  if (!existsSync(join(projectRoot, 'dist/src/server.js'))) {
    throw new Error('dist/src/server.js is missing: run npm run build')
  }

  // The start-up targets first, on a machine not yet loaded by the servers below.
  const startGoals = values['no-start'] ? [] : await measureStarts(3, line => { process.stdout.write(line) })
  const smtp = await startSinkSmtp()
  // The admin console: its bytes, and Members over 10,000 members in Chromium (bench/console.ts).
  const consoleGoals = values['no-console']
    ? []
    : await measureConsole(pin, smtp.url, 5, line => { process.stdout.write(line) })
  const pgDb = values['no-postgres'] ? null : await throwawayDatabase(values['pg-url'], 'ws_bench')
  const profileDir = values.profile ? join(projectRoot, 'bench', 'profiles') : null
  if (profileDir !== null) mkdirSync(profileDir, { recursive: true })
  // What a setting costs (metrics, traces, load shedding): the same run with it in the services' environment.
  const serviceEnv = Object.fromEntries(values['service-env'].map(kv => {
    const at = kv.indexOf('=')
    if (at < 1) throw new Error(`--service-env expects KEY=VALUE, got "${kv}"`)
    return [kv.slice(0, at), kv.slice(at + 1)]
  }))
  try {
    const dbs: DbSpec = [
      ...(values['no-pglite'] ? [] : [{ db: 'pglite' as const, url: null }]),
      ...(pgDb !== null ? [{ db: 'postgres' as const, url: pgDb.url }] : [])
    ]
    // Each launch starts every server afresh and runs its rounds; the rounds of all launches are
    // pooled per scenario (each round remembers its launch), so a ratio pairs rounds of one launch.
    const pooled = new Map<string, { scenario: Scenario, rounds: Round[] }>()
    for (let launch = 1; launch <= launches; launch++) {
      if (launches > 1) process.stdout.write(`bench: launch ${launch} of ${launches}\n`)
      // Only the first launch is profiled (a profile is of one round): the others run without the
      // profiler's preload, as the service runs.
      const profiled = launch === 1 ? profileDir : null
      const started = await startServers({ pin, dbs, smtpUrl: smtp.url, serviceEnv, connections, profileDir: profiled })
      const plan = `${started.list.length} scenarios × ${rounds} rounds × ${seconds} s, ` +
        `${connections} connections`
      if (launch === 1) process.stdout.write(`bench: ${plan} (warm-up ${warmup} s each)\n`)
      const results = await runRounds(started.list, rounds, seconds, warmup, profiled)
      for (const [s, rs] of results) {
        const key = `${s.group}\u0000${s.server}\u0000${s.name}`
        const entry = pooled.get(key) ?? { scenario: s, rounds: [] }
        entry.rounds.push(...rs.map(r => ({ ...r, launch })))
        pooled.set(key, entry)
      }
      await started.stop()
    }

    const rows = summarize(new Map([...pooled.values()].map(e => [e.scenario, e.rounds])))
    const goals = [...targets(rows, dbs.map(d => d.db)), ...startGoals, ...consoleGoals]
    process.stdout.write(formatTable(rows, goals, smtp.received()))
    const pinnedCpus = pin.on ? { servers: pin.serverCpu, loadGenerator: pin.loadCpu } : null
    const params = { rounds, launches, durationSeconds: seconds, warmupSeconds: warmup, connections, pinnedCpus }
    writeResults(values.out, params, rows, goals, smtp.received())
    process.stdout.write(`bench: wrote ${relative(projectRoot, values.out)}\n`)

    if (profileDir !== null) {
      for (const f of readdirSync(profileDir).filter(f => f.endsWith('.cpuprofile'))) {
        process.stdout.write('\n' + analyzeProfile(join(profileDir, f)) + '\n')
      }
    }
  } finally {
    cleanUp()
    await smtp.close()
    await pgDb?.drop()
  }
}

if (values.analyze !== undefined) process.stdout.write(analyzeProfile(values.analyze) + '\n')
else if (values.scale) {
  await runScale({
    pgUrl: values['pg-url'],
    rounds: Number(values.rounds),
    durationSeconds: Number(values.duration),
    warmupSeconds: Number(values.warmup),
    connections: Number(values.connections),
    pin: pinCpus(!values['no-pin']),
    build: !values['no-build'],
    sizes: wholes('sizes', values.sizes),
    pools: wholes('pools', values.pools),
    concurrentInvites: whole('concurrent', values.concurrent)
  })
} else if (values.console) {
  if (!values['no-build']) execFileSync('npm', ['run', '--silent', 'build'], { cwd: projectRoot, stdio: 'inherit' })
  const write = (line: string) => { process.stdout.write(line) }
  const goals = await runConsoleBench({
    pin: pinCpus(!values['no-pin']), runs: Number(values.rounds), members: whole('members', values.members), write
  })
  cleanUp()
  if (goals.some(g => !g.met)) process.exitCode = 1
} else if (values.jobs) await runJobPickup({ pgUrl: values['pg-url'], events: whole('events', values.events) })
else if (values.directory) {
  await runDirectory({
    people: whole('people', values.people ?? '1000'),
    members: whole('members', values.members),
    lookups: whole('lookups', values.lookups)
  })
} else if (values.scim) {
  await runScimImport({
    pgUrl: values['pg-url'],
    pin: pinCpus(!values['no-pin']),
    people: whole('people', values.people ?? '2000'),
    clients: whole('clients', values.clients),
    rounds: whole('rounds', values.rounds),
    build: !values['no-build']
  })
} else if (values['audit-export']) {
  const met = await runAuditExport({
    pgUrl: values['pg-url'],
    pin: pinCpus(!values['no-pin']),
    records: whole('records', values.records),
    build: !values['no-build']
  })
  if (!met) process.exitCode = 1
} else if (values.emails) {
  if (!runEmails({ count: whole('email-count', values['email-count']) })) process.exitCode = 1
} else if (values.sso) {
  if (!await runSso({ signIns: whole('sign-ins', values['sign-ins']) })) process.exitCode = 1
} else if (values.funnel) {
  await runFunnel({
    pgUrl: values['pg-url'],
    invitations: whole('invitations', values.invitations ?? '1000000'),
    runs: whole('runs', values.runs)
  })
} else if (values.batch) {
  await runBatchBench({
    pgUrl: values['pg-url'],
    pin: pinCpus(!values['no-pin']),
    rows: Number(values['batch-rows']),
    rounds: Number(values.rounds),
    build: !values['no-build'],
    profile: values.profile,
    concurrentInvites: whole('concurrent', values.concurrent)
  })
} else if (values.instructions) {
  await runInstructions({
    pgUrl: values['no-postgres'] ? null : values['pg-url'],
    requests: Number(values.requests),
    warmup: whole('warmup-requests', values['warmup-requests']),
    rounds: Number(values.rounds),
    keepIn: values.profile ? join(projectRoot, 'bench', 'profiles') : null
  })
} else await main()
