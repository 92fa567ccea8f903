// The only file that listens, and the one that shuts down (close-with-grace, as fastify/demo).
// `start()` is the service's start; run as a program (`node dist/src/server.js`, `tsx src/server.ts`)
// this module calls it, imported it does nothing on its own.
import { realpathSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import type { FastifyInstance, FastifyListenOptions } from 'fastify'
import closeWithGrace from 'close-with-grace'
import { ConfigError, loadConfig, type Config } from './config.js'
import { StartupError } from './config/error.js'
import { listenSocket } from './config/listen-socket.js'
import { prepareDataDir } from './db/client.js'
import { MigrationError } from './db/migrate.js'
import { projectRoot } from './paths.js'

type Tracing = ReturnType<typeof import('./tracing.js').startTracing>

/**
 * Starts the service as configured by the environment: builds the app, installs the shutdown,
 * listens on PORT (or systemd's socket), METRICS_PORT and BOUNCE_SMTP_PORT, then says it is ready.
 * A start that cannot go on exits 1 with the setting to change (failedToStart).
 */
export async function start (): Promise<FastifyInstance> {
  const warnings: string[] = []
  let config: Config
  try {
    config = loadConfig(process.env, { root: projectRoot, warn: m => warnings.push(m) })
  } catch (err) {
    failedToStart(err)
  }
  const started = performance.now()
  // A first start on the embedded database makes its cluster now, before the app's modules are
  // loaded (prepareDataDir says why); buildApp is imported after it.
  if (config.databaseUrl === null && config.dataDir !== null) await prepareDataDir(config.dataDir)
  const { buildApp } = await import('./app.js')
  // Traces only when configured: OpenTelemetry is imported here or not at all, and started before
  // buildApp creates the Fastify instance its request instrumentation attaches to.
  const tracing: Tracing | null = config.tracing.endpoint !== null
    ? (await import('./tracing.js')).startTracing({
        endpoint: config.tracing.endpoint, serviceName: config.tracing.serviceName, version: config.version
      })
    : null
  const app = await buildApp({ config, ...(tracing !== null ? { tracer: tracing.tracer } : {}) })
    .catch(failedToStart)
  for (const w of warnings) app.log.warn(w)
  // A terminal closed under the service (the window of `npm start` closed) hangs up: SIGHUP, then
  // every write to it fails. The logs fall silent then (stdoutDestination in src/logger.ts), and so
  // does anything else written to standard output or error: an 'error' event there is not a fault
  // of the service and must not become an uncaught exception (README "When things fail").
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {})
  closeOnSignals(app, config, tracing)
  const urls = await listenAll(app, config)
  app.log.info({
    url: config.publicUrl,
    database: app.db.kind,
    mail: app.services.ports.mailer.kind,
    rateLimitStore: app.rateLimitStore,
    metrics: urls.metrics ?? 'off',
    bounces: urls.bounces ?? 'off',
    traces: config.tracing.endpoint ?? 'off',
    startupMs: Math.round(performance.now() - started)
  }, 'workspace service ready')
  greetMailRelay(app)
  await logSetupLink(app)
  return app
}

/**
 * A start that cannot go on: a setting that does not work (StartupError names it) or a migration
 * that failed, as one line and exit 1. Anything else is a fault of ours: its stack is printed.
 */
function failedToStart (err: unknown): never {
  if (err instanceof ConfigError) process.stderr.write(`${err.message}\n`)
  else if (err instanceof MigrationError) process.stderr.write(`Start-up failed: ${err.message}\n`)
  else throw err
  process.exit(1)
}

/** Listening failed: the address in use or not allowed is the setting's (PORT or METRICS_PORT). */
function listenError (
  err: unknown, setting: 'PORT' | 'METRICS_PORT' | 'BOUNCE_SMTP_PORT', host: string, port: number | null
): unknown {
  const code = (err as { code?: string }).code
  const at = `${host}:${port ?? '?'}`
  const says = (problem: string, fix: string, name: string = setting): StartupError =>
    new StartupError(name, problem, fix, { cause: err })
  if (code === 'EADDRINUSE') return says(`${at} is in use by another process`, `stop it or set ${setting} to another`)
  if (code === 'EACCES') return says(`${at} needs privileges this process lacks`, `set ${setting} from 1024 up`)
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
    const name = setting.replace(/PORT$/, 'HOST')
    return says(`${host} is not an address of this machine`, `set ${name} to one (127.0.0.1, or 0.0.0.0 for all)`, name)
  }
  return err
}

/**
 * Listens on every configured port. A port that cannot be had closes what was opened (the
 * database above all), then says which setting to change.
 */
async function listenAll (
  app: FastifyInstance, config: Config
): Promise<{ metrics: string | null, bounces: string | null }> {
  try {
    // On the socket systemd holds for the service, when it passes one (src/config/listen-socket.ts),
    // else on PORT. The socket decides the address: the host given beside it only keeps Fastify from
    // binding a second address, as it does for 'localhost'.
    const fd = listenSocket(process.env, process.pid)
    const on: FastifyListenOptions & { fd?: number } = fd === null
      ? { port: config.port, host: config.host }
      : { fd, host: '0.0.0.0' }
    await app.listen(on)
      .catch((err: unknown) => { throw listenError(err, 'PORT', config.host, config.port) })
    // Prometheus metrics on their own listener (METRICS_PORT), never on the API's port.
    const metrics = await app.listenMetrics()
      .catch((err: unknown) => { throw listenError(err, 'METRICS_PORT', config.metrics.host, config.metrics.port) })
    // Delivery status notifications on their own SMTP listener (BOUNCE_SMTP_PORT), when set.
    const bounces = config.bounces.smtp
    const bouncesUrl = await app.listenBounces()
      .catch((err: unknown) => {
        throw listenError(err, 'BOUNCE_SMTP_PORT', bounces?.host ?? '', bounces?.port ?? null)
      })
    return { metrics, bounces: bouncesUrl }
  } catch (err) {
    await app.close().catch(() => {})
    failedToStart(err)
  }
}

/**
 * The mail relay, greeted once now rather than found down by the first invitation: a warning
 * naming SMTP_URL (the service runs on; invitations fail until it answers) and health's
 * `checks.mail`. Not awaited: a slow relay does not hold up the start.
 */
function greetMailRelay (app: FastifyInstance): void {
  const { mailer } = app.services.ports
  mailer.verify?.().then(
    () => { app.log.info('mail relay (SMTP_URL) answered') },
    (err: Error & { code?: string }) => {
      app.log.warn(
        `SMTP_URL: the mail relay does not answer (${err.code ?? err.message}); invitation e-mails fail until it does`
      )
    }
  ).catch(() => {})
}

/**
 * A new installation: log the one-time setup link (the one step nobody can do through the API
 * without a session). Best effort: a database hiccup here must not take down a serving service.
 */
async function logSetupLink (app: FastifyInstance): Promise<void> {
  try {
    const link = await app.services.setup.issueLink()
    if (link !== null) {
      app.log.info(`No workspace yet. Open this link to set up the first workspace and its admin: ${link}`)
    }
  } catch (err) {
    app.log.warn({ err }, 'could not issue a setup link; `npm run create-admin` makes the first admin instead')
  }
}

/** The same signal again within this long is the same delivery, not a second request to stop. */
const SAME_DELIVERY_MS = 1000

/**
 * Signals, uncaught exceptions and unhandled rejections all close the app through close-with-grace
 * the same way: stop accepting, let in-flight requests finish, close the database and mail pool.
 * A signal exits 0, a fatal error 1 (logged once, here); past SHUTDOWN_TIMEOUT_MS, or on a second
 * signal, exit 1.
 *  - The signals of a machine fault (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT) keep their
 *    default action: a handler that returns makes the fault happen again, for ever, at full CPU.
 *  - SIGTERM and SIGINT reach close-with-grace's close() through stopSignals: under `npm start` one
 *    stop arrives twice (npm forwards the signal it gets, and a signal sent to the process group —
 *    Ctrl-C at a terminal, systemd's KillMode=control-group — reaches the service directly too),
 *    and close-with-grace takes any second signal for an impatient user and exits 1.
 *  - SIGHUP (the terminal hung up) closes the app the same way, then ends the process by SIGHUP's
 *    own default action rather than by exit(): Node's exit restores the terminal's settings and,
 *    the terminal being gone, crashes (SIGABRT or SIGSEGV on Node 20).
 */
function closeOnSignals (app: FastifyInstance, config: Config, tracing: Tracing | null): void {
  let closing = false
  let stopping: { signal: NodeJS.Signals, at: number } | null = null
  const grace = closeWithGrace({
    skip: ['SIGSEGV', 'SIGBUS', 'SIGILL', 'SIGFPE', 'SIGTRAP', 'SIGABRT', 'SIGHUP', 'SIGTERM', 'SIGINT'],
    delay: config.shutdownTimeoutMs,
    logger: app.log,
    onTimeout: ms => { app.log.error(`shutdown took longer than ${ms} ms; exiting`) }
  }, async ({ err }) => {
    closing = true
    const signal = stopping?.signal
    if (err !== undefined) {
      app.log.fatal({ err }, 'fatal error: shutting down')
    } else if (config.shutdownDrainMs > 0) {
      // A planned stop drains first (src/plugins/drain.ts); a fatal error does not wait.
      const drainMs = config.shutdownDrainMs
      app.log.info({ signal, drainMs }, 'shutting down: draining (health 503, Connection: close)')
      await app.drain(config.shutdownDrainMs)
      app.log.info('drained: no longer listening; finishing in-flight requests')
    } else {
      app.log.info({ signal }, 'shutting down: finishing in-flight requests')
    }
    await app.close()
    // The spans of the last requests are exported before the process ends (bounded; best effort).
    await tracing?.shutdown().catch((e: Error) => {
      app.log.warn({ err: e.message }, 'traces: the last spans were not exported')
    })
  })
  /** SIGTERM and SIGINT close once; the same signal within SAME_DELIVERY_MS is the same delivery. */
  const onSignal = (signal: NodeJS.Signals): void => {
    const now = performance.now()
    if (stopping === null && !closing) {
      stopping = { signal, at: now }
      grace.close()
      return
    }
    if (stopping?.signal === signal && now - stopping.at < SAME_DELIVERY_MS) return
    app.log.error(`second ${signal}, exiting`)
    process.exit(1)
  }
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, onSignal)
  process.once('SIGHUP', () => {
    app.log.info({ signal: 'SIGHUP' }, 'the terminal hung up')
    // However the process then exits (closed, timed out, a fatal error on the way), it ends by
    // SIGHUP: with no listener left, its default action ends the process before exit() runs on.
    // First among the 'exit' listeners: one that throws would stop the rest.
    process.prependOnceListener('exit', () => {
      process.kill(process.pid, 'SIGHUP')
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000)
    })
    grace.close()
  })
}

/** Whether this module is the program being run (not imported by another). */
function isEntry (): boolean {
  const script = process.argv[1]
  if (script === undefined) return false
  try {
    return import.meta.url === pathToFileURL(realpathSync(script)).href
  } catch {
    return false
  }
}

if (isEntry()) await start()
